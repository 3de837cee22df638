// SmallVector: a vector of trivially copyable elements whose first N live inside it, so that the
// short arrays of an enqueue call (a Waitall's ops and waits: a halo exchange's two to eight)
// cost no heap allocation; longer ones move to the heap once, as std::vector would.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace mpix {

template <typename T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "SmallVector holds plain values only");

 public:
  SmallVector() = default;
  explicit SmallVector(std::size_t n) { resize(n); }
  SmallVector(const SmallVector &) = delete;
  SmallVector &operator=(const SmallVector &) = delete;
  ~SmallVector() {
    if (data_ != local()) std::free(data_);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T *data() { return data_; }
  const T *data() const { return data_; }
  T &operator[](std::size_t i) { return data_[i]; }
  const T &operator[](std::size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }
  T &front() { return data_[0]; }
  T &back() { return data_[size_ - 1]; }
  const T &front() const { return data_[0]; }
  const T &back() const { return data_[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    void *p = std::malloc(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data_, size_ * sizeof(T));
    if (data_ != local()) std::free(data_);
    data_ = static_cast<T *>(p);
    cap_ = n;
  }
  // New elements are value-initialised (zero for plain structs), as std::vector's.
  void resize(std::size_t n) {
    if (n > cap_) reserve(n > 2 * cap_ ? n : 2 * cap_);
    for (std::size_t i = size_; i < n; ++i) new (&data_[i]) T();
    size_ = n;
  }
  void push_back(const T &v) {
    if (size_ == cap_) reserve(2 * cap_);
    data_[size_++] = v;
  }

 private:
  T *local() { return reinterpret_cast<T *>(inline_); }
  // Raw storage: nothing is constructed until it is used.
  alignas(T) unsigned char inline_[N * sizeof(T)];
  T *data_ = local();
  std::size_t size_ = 0;
  std::size_t cap_ = N;
};

}  // namespace mpix
