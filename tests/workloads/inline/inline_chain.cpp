// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C++ built -O2 -g with known inlining, for the inlined native frames
 * named from DWARF: a template call chain the compiler inlines whole
 * (chain_outer -> mix -> Step<4>::run -> ... -> Step<1>::run) and a
 * lambda comparator inlined into std::sort's partitioning
 * (sort_round -> std::sort -> std::__introsort_loop -> ... -> the lambda).
 * Runs for argv[1] seconds (default 5).
 */
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

static volatile uint64_t sink;

template <int N> struct Step {
	static inline __attribute__((always_inline)) uint64_t run(uint64_t v)
	{
		v = v * 6364136223846793005ull + (uint64_t)N;
		return Step<N - 1>::run(v ^ (v >> 17));
	}
};

template <> struct Step<0> {
	static inline __attribute__((always_inline)) uint64_t run(uint64_t v)
	{
		return v;
	}
};

static inline __attribute__((always_inline)) uint64_t mix(uint64_t v)
{
	for (int i = 0; i < 16; i++)
		v = Step<4>::run(v + (uint64_t)i);
	return v;
}

__attribute__((noinline)) uint64_t chain_outer(uint64_t v)
{
	for (int i = 0; i < 4096; i++)
		v = mix(v);
	return v;
}

__attribute__((noinline)) void sort_round(std::vector<uint64_t> &v,
					  uint64_t seed)
{
	std::sort(v.begin(), v.end(), [seed](uint64_t a, uint64_t b) {
		return (a ^ seed) * 0x9e3779b97f4a7c15ull <
		       (b ^ seed) * 0x9e3779b97f4a7c15ull;
	});
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(secs);
	std::vector<uint64_t> v(4096);
	uint64_t x = 88172645463325252ull;

	while (std::chrono::steady_clock::now() < end) {
		x = chain_outer(x);
		for (auto &e : v) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			e = x;
		}
		sort_round(v, x);
		sink += v[0];
	}
	return 0;
}
