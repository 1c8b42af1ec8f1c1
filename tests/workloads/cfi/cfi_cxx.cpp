// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C++ built as distributions build it (-O2, no frame pointers): std::sort
 * with a comparator, inlined helpers, and exceptions thrown and caught in
 * the chain: main -> run -> Sorter::sort_all -> std::sort (inlined
 * templates) -> by_weight -> weigh, and run -> Checker::check -> throw.
 * Runs for argv[1] seconds (default 5).
 */
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t weigh(uint64_t v)
{
	for (int i = 0; i < 64; i++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	sink += v;
	return v;
}

__attribute__((noinline)) bool by_weight(uint64_t a, uint64_t b)
{
	return weigh(a) < weigh(b);
}

struct Checker {
	__attribute__((noinline)) void check(uint64_t v)
	{
		if ((v & 15) == 0)
			throw std::runtime_error("a multiple of 16");
		sink += v;
	}
};

struct Sorter {
	std::vector<uint64_t> v;

	__attribute__((noinline)) void sort_all()
	{
		std::sort(v.begin(), v.end(), by_weight);
	}
};

__attribute__((noinline)) uint64_t run(double secs)
{
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(secs);
	Sorter s;
	Checker c;
	uint64_t x = 88172645463325252ull, caught = 0;

	s.v.resize(2048);
	while (std::chrono::steady_clock::now() < end) {
		for (auto &e : s.v) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			e = x;
		}
		s.sort_all();
		/*
		 * one in sixteen throws: a few percent of the time unwinds;
		 * while libgcc installs the landing pad's context in its own
		 * frame's save slots (uw_install_context) no unwinder can
		 * step over it, so more throwing costs whole stacks
		 */
		for (auto e : s.v) {
			try {
				c.check(e);
			} catch (const std::exception &) {
				caught++;
			}
		}
	}
	return caught;
}

int main(int argc, char **argv)
{
	std::printf("%llu\n", (unsigned long long)run(argc > 1 ? std::atof(argv[1]) : 5));
	return 0;
}
