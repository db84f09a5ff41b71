import { Command } from "commander";
import { CliError } from "../exit-codes.js";
import { type CliRun, examples, handle } from "./command-kit.js";

/** Commands whose next word is a workload or node name, completed from the live cluster. */
const workloadNameCommands = ["describe workload", "explain", "logs", "delete", "start", "stop", "restart", "retry"];
const nodeNameCommands = ["node cordon", "node uncordon", "node drain", "describe node"];

/** Every command path (`node cordon`) with its subcommands and flags, read from the program. */
export function commandTable(program: Command): Map<string, { subcommands: string[]; flags: string[] }> {
  const table = new Map<string, { subcommands: string[]; flags: string[] }>();
  const visit = (command: Command, path: string) => {
    const flags = [...command.options, ...(path ? [] : [])].flatMap((o) =>
      [o.long, o.short].filter((f): f is string => !!f),
    );
    table.set(path, {
      subcommands: command.commands.flatMap((c) => [c.name(), ...c.aliases()]),
      flags: [...flags, "--help"],
    });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, "");
  return table;
}

/** A bash completion script for the program: subcommands, flags, and workload/node names from the cluster. */
export function bashCompletion(program: Command): string {
  const table = commandTable(program);
  const workloads = "$(persysctl get workloads -o name 2>/dev/null)";
  const nodes = "$(persysctl get nodes -o name 2>/dev/null)";
  const extra: Record<string, string> = { describe: "workload node", get: "workloads nodes events" };
  const cases = [...table.entries()].map(([path, { subcommands, flags }]) => {
    const names = workloadNameCommands.includes(path) ? workloads : nodeNameCommands.includes(path) ? nodes : "";
    const words = [extra[path] ?? "", names, ...subcommands, ...flags].filter(Boolean).join(" ");
    return `    "${path}") words="${words}" ;;`;
  });
  cases.push(`    "describe workload"|"get workloads"|"get workload"|"get wl") words="${workloads}" ;;`);
  cases.push(`    "describe node"|"get nodes"|"get node"|"get no") words="${nodes}" ;;`);
  return `# persysctl bash completion. Load it with:  source <(persysctl completion bash)
_persysctl() {
  local cur path word words i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    if [[ -z "$path" ]]; then path="$word"; else path="$path $word"; fi
  done
  case "$path" in
${cases.join("\n")}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _persysctl persysctl
`;
}

/** A zsh completion script: the bash one through zsh's bashcompinit. */
export function zshCompletion(program: Command): string {
  return `#compdef persysctl
# persysctl zsh completion. Load it with:  source <(persysctl completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split("\n").slice(1).join("\n")}`;
}

/** `persysctl completion bash|zsh`. */
export function completionCommand(run: CliRun, program: () => Command): Command {
  const command = new Command("completion")
    .description("print a shell completion script (bash or zsh)")
    .argument("<shell>", "bash or zsh");
  examples(command, ["source <(persysctl completion bash)", "persysctl completion zsh > ~/.zfunc/_persysctl"]);
  return handle(run, command, (ctx, [shell]) => {
    if (shell === "bash") ctx.out(bashCompletion(program()));
    else if (shell === "zsh") ctx.out(zshCompletion(program()));
    else throw new CliError(`unknown shell "${shell}": use bash or zsh`);
    return 0;
  });
}
