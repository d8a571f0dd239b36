// Prints the orderings that libstdc++'s std::partial_sort, std::stable_sort and
// std::inplace_merge give for fixed score arrays full of ties, with the comparators LiteRT's
// TFLite_Detection_PostProcess uses (`values[a] > values[b]`, `a.score > b.score`).
// Tests/EngineTests/LibstdcxxOrderingTests.swift holds its output; rebuild and rerun with
//
//     g++ -std=c++17 -O2 Tests/Goldens/make_libstdcxx_orderings.cpp -o /tmp/orderings && /tmp/orderings
//
// (recorded with Debian 12's g++ 12.2 / libstdc++ 6.0.30).
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

static void print(const char* label, const std::vector<int>& v) {
    std::printf("%s [", label);
    for (size_t i = 0; i < v.size(); ++i) std::printf(i ? ", %d" : "%d", v[i]);
    std::printf("]\n");
}

int main() {
    const std::vector<std::vector<float>> inputs = {
        {1, 1, 1, 1},
        {0, 1, 0, 1, 0, 1},
        {3, 1, 3, 2, 3, 1, 2},
        {2, 2, 1, 2, 2, 1, 2, 2, 1},
        {0.5f, 0.25f, 0.5f, 0.75f, 0.25f, 0.5f, 0.75f, 0.5f, 0.25f, 0.75f, 0.5f, 0.5f},
    };
    for (const auto& values : inputs) {
        std::vector<int> shown(values.begin(), values.end());
        std::printf("values");
        for (float v : values) std::printf(" %g", v);
        std::printf("\n");
        const int n = static_cast<int>(values.size());
        auto greater = [&values](int a, int b) { return values[a] > values[b]; };
        for (int prefix = 1; prefix <= n; ++prefix) {
            std::vector<int> order(n);
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + prefix, order.end(), greater);
            char label[32];
            std::snprintf(label, sizeof label, "partial %d", prefix);
            print(label, order);
        }
        std::vector<int> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), greater);
        print("stable", order);
    }
    // inplace_merge of two descending runs of (score, id); ids show which run an entry came from.
    struct Entry { float score; int id; };
    const std::vector<Entry> runs = {{5, 0}, {3, 1}, {3, 2}, {1, 3}, {4, 10}, {3, 11}, {3, 12}, {1, 13}, {0, 14}};
    std::vector<Entry> merged = runs;
    std::inplace_merge(merged.begin(), merged.begin() + 4, merged.end(),
                       [](const Entry& a, const Entry& b) { return a.score > b.score; });
    std::vector<int> ids;
    for (const auto& e : merged) ids.push_back(e.id);
    print("merge", ids);
    return 0;
}
