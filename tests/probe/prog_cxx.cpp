/* SPDX-License-Identifier: MIT */
/* prog_cxx.cpp: C++ allocations through new, new[] and a template member, some deleted; the
 * driver expects the sites under their demangled names (ns::Maker::build(int), ...). */
#include <cstdio>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace ns {

struct Widget {
	long a[5]; // 40 bytes
};

struct Maker {
	NOINLINE static Widget *build(int i);
	NOINLINE static int *build_array(int n);
};

Widget *Maker::build(int i)
{
	Widget *w = new Widget(); // SITE:build
	w->a[0] = i;
	return w;
}

int *Maker::build_array(int n)
{
	return new int[n]; // SITE:build_array
}

template <typename T> struct Pool {
	std::vector<T *> items;
	NOINLINE void grow(unsigned long n)
	{
		for (unsigned long i = 0; i < n; i++)
			items.push_back(new T()); // SITE:grow
	}
};

} // namespace ns

int main()
{
	std::vector<ns::Widget *> ws;
	for (int i = 0; i < 10; i++)
		ws.push_back(ns::Maker::build(i));
	for (int i = 0; i < 4; i++)
		delete ws[i];
	int *arr = ns::Maker::build_array(25);
	int *arr2 = ns::Maker::build_array(25);
	delete[] arr2;
	ns::Pool<ns::Widget> pool;
	pool.grow(3);
	std::printf("%ld %d %zu\n", ws[9]->a[0], arr[0] * 0, pool.items.size());
	return 0;
}
