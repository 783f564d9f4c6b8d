// Run by scripts/check-package.sh: the package's entry as a CommonJS user gets it (require).
const assert = require('node:assert/strict');
const cli = require('@merchant-wallet/cli');

assert.match(require.resolve('@merchant-wallet/cli'), /[\\/]node_modules[\\/]@merchant-wallet[\\/]cli[\\/]dist[\\/]cjs[\\/]index\.cjs$/);
assert.equal(cli.parseDuration('3d'), 259200);
assert.equal(cli.EXIT_USAGE, 2);
assert.ok(cli.triggerableTypes.includes('deposit.credited'));
console.log('cli cjs: ok');
