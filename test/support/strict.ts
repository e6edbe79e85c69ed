// Loaded with --import into every test process: a process warning or an unhandled rejection
// fails the file even when every assertion passed.
process.on('warning', (warning) => {
  if (warning.name === 'ExperimentalWarning') return;
  process.exitCode = 1;
  console.error('process warning during tests:', warning);
});
process.on('unhandledRejection', (reason) => {
  process.exitCode = 1;
  console.error('unhandled rejection during tests:', reason);
});
