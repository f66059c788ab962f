// Device arrays owned by a Backend (RAII), and the row-major matrix view the model uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/engine/backend.h"

namespace meshwork::engine {

template <typename T>
class DeviceArray {
public:
    DeviceArray() = default;
    DeviceArray(Backend& be, std::size_t count)
        : be_(&be), buf_(be.allocate(count * sizeof(T))), count_(count) {}
    ~DeviceArray() { reset(); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    DeviceArray(DeviceArray&& o) noexcept
        : be_(o.be_), buf_(std::exchange(o.buf_, {})), count_(std::exchange(o.count_, 0)) {}
    DeviceArray& operator=(DeviceArray&& o) noexcept {
        if (this != &o) {
            reset();
            be_ = o.be_;
            buf_ = std::exchange(o.buf_, {});
            count_ = std::exchange(o.count_, 0);
        }
        return *this;
    }
    void reset() {
        if (be_ && buf_.ptr) be_->deallocate(buf_);
        buf_ = {};
        count_ = 0;
    }

    [[nodiscard]] T* data() { return static_cast<T*>(buf_.ptr); }
    [[nodiscard]] const T* data() const { return static_cast<const T*>(buf_.ptr); }
    [[nodiscard]] std::size_t size() const { return count_; }
    [[nodiscard]] bool empty() const { return count_ == 0; }

private:
    Backend* be_ = nullptr;
    DeviceBuffer buf_;
    std::size_t count_ = 0;
};

using Floats = DeviceArray<float>;
using Ints = DeviceArray<std::int32_t>;

// A rows × cols fp32 matrix on the device.
struct Tensor {
    Floats data;
    int rows = 0;
    int cols = 0;

    Tensor() = default;
    Tensor(Backend& be, int r, int c)
        : data(be, static_cast<std::size_t>(r) * static_cast<std::size_t>(c)), rows(r), cols(c) {}
    [[nodiscard]] float* ptr() { return data.data(); }
    [[nodiscard]] const float* ptr() const { return data.data(); }
    [[nodiscard]] std::size_t size() const { return data.size(); }
    [[nodiscard]] float* row(int r) { return ptr() + static_cast<std::size_t>(r) * cols; }
    [[nodiscard]] const float* row(int r) const { return ptr() + static_cast<std::size_t>(r) * cols; }
};

// Host ↔ device helpers on a stream (copy_to_host completes before returning).
inline Ints upload_ints(Backend& be, const std::vector<std::int32_t>& host, Stream s) {
    Ints out(be, host.size());
    be.copy_to_device(out.data(), host.data(), host.size() * sizeof(std::int32_t), s);
    return out;
}
inline std::vector<float> download(Backend& be, const float* src, std::size_t count, Stream s) {
    std::vector<float> out(count);
    be.copy_to_host(out.data(), src, count * sizeof(float), s);
    return out;
}

}  // namespace meshwork::engine
