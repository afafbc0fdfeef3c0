#!/usr/bin/env node
/** The `voice-agent-export` command's entry: the Node.js version check (../cli/entry), then ./main. */
import { startCommand } from "../cli/entry";

startCommand("voice-agent-export", () => require("./main") as typeof import("./main"));
