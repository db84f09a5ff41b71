/**
 * The Lua scripts of the Redis event store: each write is one atomic script so its bounds (cap, age
 * window, expiry) are applied together with the write, in one round trip.
 */
import type { Redis } from "ioredis";

/**
 * KEYS[1] stream; ARGV: maxLen, ttlSeconds, maxAgeMs ('' for none), then field/value pairs (the
 * payload is the field `_p`). Appends with an id from the server clock, trims to exactly maxLen,
 * trims entries older than maxAgeMs before the new id's time, refreshes the idle expiry.
 */
const appendLua = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[1], '*', unpack(ARGV, 4))
if ARGV[3] ~= '' then
  local cutoff = tonumber(string.match(id, '^(%d+)')) - tonumber(ARGV[3])
  if cutoff > 0 then redis.call('XTRIM', KEYS[1], 'MINID', '=', string.format('%.0f', cutoff)) end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return id
`;

/** KEYS[1] counter; ARGV: by, ttlSeconds. Returns the new value. */
const incrLua = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return value
`;

/**
 * KEYS[1] series (a sorted set scored by timestamp, members `<ts>:<value>`); ARGV: ts, member,
 * maxPoints, maxAgeMs. Replaces the point at ts, drops points older than maxAgeMs before the server
 * clock, keeps the newest maxPoints, and expires the series after maxAgeMs without samples.
 */
const sampleLua = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%.0f', now - tonumber(ARGV[4])))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[3]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`;

/** A connection with the event store's scripts defined on it. */
export interface ScriptedRedis extends Redis {
  persysAppend(key: string, ...args: Array<string | number>): Promise<string>;
  persysIncr(key: string, by: number, ttlSeconds: number): Promise<number>;
  persysSample(key: string, ts: number, member: string, maxPoints: number, maxAgeMs: number): Promise<number>;
}

/**
 * Defines the scripts on `redis`. ioredis sends each as EVAL on the first use per socket and as
 * EVALSHA afterwards, so they survive a Redis restart (which empties the script cache).
 */
export function defineScripts(redis: Redis): ScriptedRedis {
  redis.defineCommand("persysAppend", { numberOfKeys: 1, lua: appendLua });
  redis.defineCommand("persysIncr", { numberOfKeys: 1, lua: incrLua });
  redis.defineCommand("persysSample", { numberOfKeys: 1, lua: sampleLua });
  return redis as ScriptedRedis;
}
