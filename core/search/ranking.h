// The order of the results: more tokens per second first, then lower peak memory per GPU,
// then the candidate's place in the enumeration (so that equal layouts come out in the
// same order whatever the number of threads, and the simpler settings first).
#pragma once

#include <cstdint>
#include <vector>

#include "core/search/candidate.h"

namespace meshwork::search {

struct Scored {
    Candidate candidate;
    double tokens_per_s = 0;
    double step_time_s = 0;
    double mfu = 0;
    std::int64_t peak_bytes = 0;      // the worst stage
    std::int64_t overflow_bytes = 0;  // peak − HBM on the worst stage (0 when it fits)
    std::uint64_t ordinal = 0;        // (task index << 32) | index inside the task
};

// Whether `a` ranks before `b`.
bool ranks_before(const Scored& a, const Scored& b);
// For layouts that do not fit: the smallest overflow first, then the ordinal.
bool closer_to_fitting(const Scored& a, const Scored& b);

// The best `capacity` entries seen under `before`, kept sorted. Inserting costs O(capacity)
// when an entry makes the cut and O(1) when it does not.
class TopK {
  public:
    using Order = bool (*)(const Scored&, const Scored&);
    TopK(std::size_t capacity, Order before) : capacity_(capacity), before_(before) {
        items_.reserve(capacity + 1);
    }
    // Whether an entry that ranks like `s` would be kept (lets callers skip building it).
    [[nodiscard]] bool would_keep(const Scored& s) const {
        return items_.size() < capacity_ || before_(s, items_.back());
    }
    void insert(const Scored& s);
    void merge(const TopK& other);
    [[nodiscard]] const std::vector<Scored>& items() const { return items_; }

  private:
    std::size_t capacity_;
    Order before_;
    std::vector<Scored> items_;
};

}  // namespace meshwork::search
