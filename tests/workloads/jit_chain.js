// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A JavaScript workload with a known chain for the JIT-symbol tests:
 * the main loop -> pmTop -> pmMid -> pmLeaf, which spins. Run it with
 * node --perf-basic-prof (or --perf-prof) --no-turbo-inlining, so each
 * function keeps its own frame. Prints "READY <pid>" once the chain has
 * been compiled. Usage: node jit_chain.js SECONDS
 */
'use strict';

function pmLeaf(n) {
	let s = 0;

	for (let i = 0; i < n; i++)
		s = (s + i * i) % 1000003;
	return s;
}

function pmMid(n) {
	return pmLeaf(n) + 1;
}

function pmTop(n) {
	return pmMid(n) + 1;
}

const secs = Number(process.argv[2] || 5);
const end = Date.now() + secs * 1000;
let x = 0;

/* warm up: the optimizing compiler has run by the time READY is printed */
for (let k = 0; k < 2000; k++)
	x += pmTop(20000);
console.log('READY ' + process.pid);
while (Date.now() < end) {
	for (let k = 0; k < 100; k++)
		x += pmTop(20000);
}
console.log('DONE ' + x);
