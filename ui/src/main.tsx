import { render } from "preact";
import { App } from "./app.js";
import "./styles.css";

performance.mark("persys:boot");
render(<App />, document.getElementById("app")!);
