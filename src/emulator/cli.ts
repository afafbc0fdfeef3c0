#!/usr/bin/env node
/**
 * `voice-agent-emulator`: checks the Node.js version before anything else loads (the emulator's
 * HTTP client fails on Node.js older than 22.19 with a stack trace), then runs `command.ts`.
 */
import { startCommand } from "../cli/entry";

startCommand("voice-agent-emulator", () => require("./command") as typeof import("./command"));
