#!/usr/bin/env node
/** The `voice-agent-diff` command's entry: the Node.js version check (../cli/entry), then ./main. */
import { startCommand } from "../cli/entry";

startCommand("voice-agent-diff", () => require("./main") as typeof import("./main"));
