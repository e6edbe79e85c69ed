#!/usr/bin/env node
// The bin. The daemon's heap settings go first, before the rest of olp is loaded (see heap.ts).
import { nativeAddon, tuneHeap } from '../process/heap.js';

if (process.argv[2] === 'serve') tuneHeap(process.env);
// The process starter is chosen once, from the bin's environment, before anything is started.
nativeAddon(process.env);
await import('./commands.js');
