#!/usr/bin/env node
// The `mwa` command: the package's built entry (dist/esm/index.js) run with this process's arguments.
import { main } from '../dist/esm/index.js';

process.exitCode = await main(process.argv.slice(2));
