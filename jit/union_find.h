// Disjoint sets over 0..n-1 with path halving: fusion groups nodes with it,
// memory planning groups values that share a buffer.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

namespace wok::jit {

struct UnionFind {
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  // Puts a's set into b's; b's representative stays.
  void join(int a, int b) { parent[find(a)] = find(b); }
  std::vector<int> parent;
};

}  // namespace wok::jit
