#include "cache/state_copy.h"

#include <cstring>

#include "cache/section_pool.h"
#include "core/check.h"

namespace anchorage::cache {

namespace {

bool same_spec(const core::TensorSpec& a, const core::TensorSpec& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape &&
         a.token_axis == b.token_axis;
}

}  // namespace

bool same_layout(const core::StateLayout& a, const core::StateLayout& b) {
  if (a.sections.size() != b.sections.size() || a.views.size() != b.views.size()) return false;
  for (size_t i = 0; i < a.sections.size(); ++i)
    if (!same_spec(a.sections[i], b.sections[i])) return false;
  for (size_t i = 0; i < a.views.size(); ++i)
    if (!same_spec(a.views[i], b.views[i])) return false;
  return true;
}

SectionCopy::~SectionCopy() {
  SectionPool::instance().give(std::move(parts_));
}

SectionCopy::SectionCopy(SectionCopy&& o) noexcept
    : position_(o.position_), bytes_(o.bytes_), parts_(std::move(o.parts_)) {
  o.parts_.clear();
  o.bytes_ = 0;
}

// A swap: the buffers this copy held leave with `o`, and go back to the pool when it does.
SectionCopy& SectionCopy::operator=(SectionCopy&& o) noexcept {
  std::swap(position_, o.position_);
  std::swap(bytes_, o.bytes_);
  std::swap(parts_, o.parts_);
  return *this;
}

SectionCopy SectionCopy::with_buffers(const core::StateLayout& layout, int64_t position) {
  std::vector<size_t> sizes;
  for (const core::TensorSpec& spec : layout.sections) sizes.push_back(size_t(spec.bytes()));
  SectionCopy c;
  c.position_ = position;
  c.parts_ = SectionPool::instance().take(sizes);
  for (const core::AlignedBuffer& b : c.parts_) c.bytes_ += int64_t(b.size());
  return c;
}

SectionCopy SectionCopy::allocate(const core::StateLayout& layout, int64_t position,
                                  core::AlignedBuffer::Fill fill) {
  SectionCopy c = with_buffers(layout, position);
  if (fill == core::AlignedBuffer::Fill::kZero)
    for (core::AlignedBuffer& b : c.parts_) b.zero();
  return c;
}

SectionCopy SectionCopy::clone() const {
  std::vector<size_t> sizes;
  for (const core::AlignedBuffer& b : parts_) sizes.push_back(b.size());
  SectionCopy c;
  c.position_ = position_;
  c.bytes_ = bytes_;
  c.parts_ = SectionPool::instance().take(sizes);
  for (size_t i = 0; i < parts_.size(); ++i)
    std::memcpy(c.parts_[i].data(), parts_[i].data(), parts_[i].size());
  return c;
}

SectionCopy SectionCopy::capture(engine::Engine& engine) {
  engine.settle();
  const core::StateLayout& layout = engine.layout();
  SectionCopy c = with_buffers(layout, engine.length());
  for (size_t i = 0; i < c.parts_.size(); ++i)
    std::memcpy(c.parts_[i].data(), engine.section_data(i), c.parts_[i].size());
  return c;
}

core::Status SectionCopy::write_back(engine::Engine& engine) const {
  const core::StateLayout& layout = engine.layout();
  if (layout.sections.size() != parts_.size())
    return core::Status::invalid_argument("section copy: the engine's layout differs");
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (int64_t(parts_[i].size()) != layout.sections[i].bytes())
      return core::Status::invalid_argument("section copy: the engine's layout differs");
  }
  for (size_t i = 0; i < parts_.size(); ++i)
    std::memcpy(engine.section_data(i), parts_[i].data(), parts_[i].size());
  return core::Status::ok();
}

bool SectionCopy::same_bytes(const SectionCopy& other) const {
  if (parts_.size() != other.parts_.size()) return false;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (parts_[i].size() != other.parts_[i].size() ||
        std::memcmp(parts_[i].data(), other.parts_[i].data(), parts_[i].size()) != 0)
      return false;
  }
  return true;
}

RowCopy::~RowCopy() {
  SectionPool::instance().give(std::move(parts_));
}

RowCopy::RowCopy(RowCopy&& o) noexcept
    : begin_(o.begin_), end_(o.end_), bytes_(o.bytes_), parts_(std::move(o.parts_)) {
  o.parts_.clear();
  o.begin_ = o.end_ = o.bytes_ = 0;
}

// A swap, as SectionCopy's: the buffers this copy held leave with `o`.
RowCopy& RowCopy::operator=(RowCopy&& o) noexcept {
  std::swap(begin_, o.begin_);
  std::swap(end_, o.end_);
  std::swap(bytes_, o.bytes_);
  std::swap(parts_, o.parts_);
  return *this;
}

RowCopy RowCopy::with_buffers(const core::StateLayout& layout, int64_t begin, int64_t end) {
  ANCHORAGE_CHECK(0 <= begin && begin <= end);
  std::vector<size_t> sizes;
  for (const core::TensorSpec& spec : layout.views)
    sizes.push_back(size_t((end - begin) * spec.bytes_per_token()));
  RowCopy c;
  c.begin_ = begin;
  c.end_ = end;
  c.parts_ = SectionPool::instance().take(sizes);
  for (const core::AlignedBuffer& b : c.parts_) c.bytes_ += int64_t(b.size());
  return c;
}

RowCopy RowCopy::allocate(const core::StateLayout& layout, int64_t begin, int64_t end,
                          core::AlignedBuffer::Fill fill) {
  RowCopy c = with_buffers(layout, begin, end);
  if (fill == core::AlignedBuffer::Fill::kZero)
    for (core::AlignedBuffer& b : c.parts_) b.zero();
  return c;
}

RowCopy RowCopy::capture(engine::Engine& engine, int64_t begin, int64_t end) {
  ANCHORAGE_CHECK(0 <= begin && begin <= end && end <= engine.capacity());
  engine.settle();
  const core::StateLayout& layout = engine.layout();
  RowCopy c = with_buffers(layout, begin, end);
  for (size_t i = 0; i < layout.views.size(); ++i)
    if (c.parts_[i].size() > 0)
      core::copy_rows_out(layout.views[i], engine.view_data(i), begin, end, c.parts_[i].data());
  return c;
}

core::Status RowCopy::write_back(engine::Engine& engine) const {
  return write_back(engine, begin_, end_);
}

// Every view checked before any is written: a copy of another layout writes nothing.
core::Status RowCopy::write_back(engine::Engine& engine, int64_t a, int64_t b) const {
  for (size_t i = 0; i < parts_.size(); ++i)
    if (core::Status s = check_view(engine, i, a, b); !s.is_ok()) return s;
  for (size_t i = 0; i < parts_.size(); ++i)
    copy_packed(engine, i, parts_[i].data(), begin_, end_, a, b);
  return core::Status::ok();
}

core::Status RowCopy::write_back_view(engine::Engine& engine, size_t i, int64_t a,
                                      int64_t b) const {
  if (core::Status s = check_view(engine, i, a, b); !s.is_ok()) return s;
  copy_packed(engine, i, parts_[i].data(), begin_, end_, a, b);
  return core::Status::ok();
}

core::Status RowCopy::check_view(const engine::Engine& engine, size_t i, int64_t a,
                                 int64_t b) const {
  if (engine.layout().views.size() != parts_.size() || i >= parts_.size())
    return core::Status::invalid_argument("row copy: the engine's layout differs");
  return check_packed(engine, i, parts_[i].size(), begin_, end_, a, b);
}

core::Status RowCopy::check_packed(const engine::Engine& engine, size_t i, size_t packed_bytes,
                                   int64_t begin, int64_t end, int64_t a, int64_t b) {
  const core::StateLayout& layout = engine.layout();
  if (a < begin || b > end || a > b)
    return core::Status::invalid_argument("row copy: rows outside the copy");
  if (b > engine.capacity()) return core::Status::invalid_argument("row copy: past capacity");
  if (i >= layout.views.size() ||
      int64_t(packed_bytes) != (end - begin) * layout.views[i].bytes_per_token())
    return core::Status::invalid_argument("row copy: the engine's layout differs");
  return core::Status::ok();
}

core::Status RowCopy::write_back_packed(engine::Engine& engine, size_t i,
                                        std::span<const std::byte> packed, int64_t begin,
                                        int64_t end, int64_t a, int64_t b) {
  if (core::Status s = check_packed(engine, i, packed.size(), begin, end, a, b); !s.is_ok())
    return s;
  copy_packed(engine, i, packed.data(), begin, end, a, b);
  return core::Status::ok();
}

// Unchecked: the callers checked the rows and the sizes first.
void RowCopy::copy_packed(engine::Engine& engine, size_t i, const void* packed, int64_t begin,
                          int64_t end, int64_t a, int64_t b) {
  const core::TensorSpec& view = engine.layout().views[i];
  // The packed rows [begin, end) hold [a, b) as a sub-block of every run.
  core::copy_token_rows(view, engine.view_data(i), view.capacity(), a, packed, end - begin,
                        a - begin, b - a);
}

core::Status RowCopy::copy_rows(const core::StateLayout& layout, const RowCopy& src, int64_t a,
                                int64_t b) {
  if (a > b || a < begin_ || b > end_ || a < src.begin_ || b > src.end_)
    return core::Status::invalid_argument("row copy: rows outside a copy");
  if (layout.views.size() != parts_.size() || src.parts_.size() != parts_.size())
    return core::Status::invalid_argument("row copy: the layouts differ");
  for (size_t i = 0; i < parts_.size(); ++i) {
    const int64_t per_token = layout.views[i].bytes_per_token();
    if (int64_t(parts_[i].size()) != (end_ - begin_) * per_token ||
        int64_t(src.parts_[i].size()) != (src.end_ - src.begin_) * per_token)
      return core::Status::invalid_argument("row copy: the layouts differ");
  }
  // Both copies are packed the same way: every run holds its rows back to back.
  for (size_t i = 0; i < parts_.size(); ++i)
    core::copy_token_rows(layout.views[i], parts_[i].data(), end_ - begin_, a - begin_,
                          src.parts_[i].data(), src.end_ - src.begin_, a - src.begin_, b - a);
  return core::Status::ok();
}

}  // namespace anchorage::cache
