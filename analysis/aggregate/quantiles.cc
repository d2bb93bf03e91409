#include "analysis/aggregate/quantiles.h"

#include <algorithm>
#include <cmath>

namespace qprof::aggregate {
namespace {

constexpr double kGamma = (1 + DurationQuantiles::kRelativeError) /
                          (1 - DurationQuantiles::kRelativeError);
const double kLogGamma = std::log(kGamma);

// Rank of the nearest-rank percentile, as the exact path has always computed it.
uint64_t NearestRank(double p, uint64_t n) {
  uint64_t rank = static_cast<uint64_t>(p * static_cast<double>(n) + 0.999999);
  return std::clamp<uint64_t>(rank, 1, n);
}

}  // namespace

int32_t DurationQuantiles::BucketOf(int64_t ns) {
  return static_cast<int32_t>(std::ceil(std::log(static_cast<double>(ns)) / kLogGamma));
}

int64_t DurationQuantiles::BucketValue(int32_t index) {
  // The point of (g^(i-1), g^i] whose relative distance to both ends is a.
  return static_cast<int64_t>(std::llround(2 * std::pow(kGamma, index) / (kGamma + 1)));
}

uint64_t& DurationQuantiles::BucketAt(int32_t i) {
  if (buckets_.empty()) {
    offset_ = i;
    buckets_.assign(1, 0);
  } else if (i < offset_) {
    buckets_.insert(buckets_.begin(), static_cast<size_t>(offset_ - i), 0);
    offset_ = i;
  } else if (static_cast<size_t>(i - offset_) >= buckets_.size()) {
    buckets_.resize(static_cast<size_t>(i - offset_) + 1, 0);
  }
  return buckets_[static_cast<size_t>(i - offset_)];
}

void DurationQuantiles::AddToBucket(int64_t ns, uint64_t n) {
  if (ns <= 0) {
    zeros_ += n;
  } else {
    BucketAt(BucketOf(ns)) += n;
  }
}

void DurationQuantiles::ToSketch() {
  if (!exact_) return;
  exact_ = false;
  for (int64_t v : values_) AddToBucket(v, 1);
  values_.clear();
  values_.shrink_to_fit();
}

void DurationQuantiles::Add(int64_t ns) {
  if (count_ == 0) {
    min_ = max_ = ns;
  } else {
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  ++count_;
  if (exact_ && count_ > kExactLimit) ToSketch();
  if (exact_) {
    values_.push_back(ns);
  } else {
    AddToBucket(ns, 1);
  }
}

void DurationQuantiles::Merge(const DurationQuantiles& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    min_ = o.min_;
    max_ = o.max_;
  } else {
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  count_ += o.count_;
  if (exact_ && o.exact_ && count_ <= kExactLimit) {
    values_.insert(values_.end(), o.values_.begin(), o.values_.end());
    return;
  }
  ToSketch();
  if (o.exact_) {
    for (int64_t v : o.values_) AddToBucket(v, 1);
    return;
  }
  zeros_ += o.zeros_;
  for (size_t k = 0; k < o.buckets_.size(); ++k) {
    if (o.buckets_[k] != 0) BucketAt(o.offset_ + static_cast<int32_t>(k)) += o.buckets_[k];
  }
}

int64_t DurationQuantiles::Quantile(double p) const {
  if (count_ == 0) return 0;
  uint64_t rank = NearestRank(p, count_);
  if (exact_) {
    std::vector<int64_t> v = values_;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
    return v[rank - 1];
  }
  if (rank <= zeros_) return 0;
  uint64_t seen = zeros_;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    seen += buckets_[k];
    if (seen >= rank) {
      // The true value lies in the bucket and in [min, max]: clamping only reduces the error.
      return std::clamp(BucketValue(offset_ + static_cast<int32_t>(k)), min_, max_);
    }
  }
  return max_;
}

void DurationQuantiles::ToProto(proto::PartialQuantiles* out) const {
  out->set_count(count_);
  out->set_min_ns(min_);
  out->set_max_ns(max_);
  out->set_exact(exact_);
  if (exact_) {
    out->mutable_values()->Assign(values_.begin(), values_.end());
  } else {
    out->set_zeros(zeros_);
    out->set_offset(offset_);
    out->mutable_buckets()->Assign(buckets_.begin(), buckets_.end());
  }
}

bool DurationQuantiles::Valid() const {
  if (count_ == 0) return values_.empty() && zeros_ == 0 && buckets_.empty();
  if (min_ > max_ || min_ < 0) return false;
  if (exact_) return values_.size() == count_ && count_ <= kExactLimit;
  // Buckets span at most the int64 range: under 4,400 of them at a = 0.5%.
  if (buckets_.size() > 8192 || offset_ < -1 || offset_ > 8192) return false;
  uint64_t n = zeros_;
  for (uint64_t b : buckets_) {
    if (b > count_ || n > count_ - b) return false;
    n += b;
  }
  return n == count_;
}

DurationQuantiles DurationQuantiles::FromProto(const proto::PartialQuantiles& in) {
  DurationQuantiles q;
  q.count_ = in.count();
  q.min_ = in.min_ns();
  q.max_ = in.max_ns();
  q.exact_ = in.exact();
  if (q.exact_) {
    q.values_.assign(in.values().begin(), in.values().end());
  } else {
    q.zeros_ = in.zeros();
    q.offset_ = in.offset();
    q.buckets_.assign(in.buckets().begin(), in.buckets().end());
  }
  return q;
}

}  // namespace qprof::aggregate
