#!/usr/bin/env node
// The bin. The daemon's heap settings go first, before the rest of olp is loaded (see heap.ts).
import { tuneHeap } from '../process/heap.js';

if (process.argv[2] === 'serve') tuneHeap(process.env);
await import('./commands.js');
