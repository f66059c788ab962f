#include "gui/app/background_jobs.h"

#include <QMetaObject>

#include <algorithm>

namespace meshwork::gui {

void JobControl::progress(qint64 done, qint64 total) const {
    auto& p = *jobs_.progress_;
    p.done.store(done, std::memory_order_relaxed);
    p.total.store(total, std::memory_order_relaxed);
    p.reported.store(true, std::memory_order_release);
}

void JobControl::post(std::function<void()> fn) const { jobs_.post(std::move(fn)); }

BackgroundJobs::BackgroundJobs(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);  // jobs run one after the other, in the order started
    connect(&progress_timer_, &QTimer::timeout, this, &BackgroundJobs::emit_progress);
}

BackgroundJobs::~BackgroundJobs() {
    cancel();
    pool_.waitForDone();
}

void BackgroundJobs::on_progress(std::function<void(qint64, qint64)> handler, int interval_ms) {
    progress_handler_ = std::move(handler);
    progress_timer_.setInterval(interval_ms);
}

void BackgroundJobs::post(std::function<void()> fn) {
    // Queued to this object on its (the owner's) thread; dropped by Qt once it is gone,
    // which the destructor's wait makes the only case.
    QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

void BackgroundJobs::emit_progress() {
    if (!progress_handler_ || !progress_->reported.load(std::memory_order_acquire)) return;
    progress_handler_(progress_->done.load(std::memory_order_relaxed), progress_->total.load(std::memory_order_relaxed));
}

void BackgroundJobs::finish_on_owner_thread() {
    --pending_;
    if (pending_ == 0) progress_timer_.stop();
}

void BackgroundJobs::start_job(std::function<Deliver(const JobControl&)> work,
                               std::function<void(const QString&)> failed) {
    auto stop = std::make_shared<std::stop_source>();
    {
        const std::lock_guard lock(mutex_);
        active_.push_back(stop);
    }
    ++pending_;
    if (progress_handler_ && !progress_timer_.isActive()) progress_timer_.start();
    pool_.start([this, stop, work = std::move(work), failed = std::move(failed)]() mutable {
        Deliver deliver;
        QString error;
        progress_->reported.store(false, std::memory_order_relaxed);
        try {
            deliver = work(JobControl(*this, stop->get_token()));
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        // The job's last progress, read now: the next job may report before this is delivered.
        const bool reported = progress_->reported.load(std::memory_order_acquire);
        const qint64 done = progress_->done.load(std::memory_order_relaxed);
        const qint64 total = progress_->total.load(std::memory_order_relaxed);
        {
            const std::lock_guard lock(mutex_);
            active_.erase(std::find(active_.begin(), active_.end(), stop));
        }
        post([this, reported, done, total, deliver = std::move(deliver), failed = std::move(failed), error]() mutable {
            if (reported && progress_handler_) progress_handler_(done, total);  // before the result
            finish_on_owner_thread();
            if (deliver) deliver();
            else failed(error);
        });
    });
}

void BackgroundJobs::cancel() {
    const std::lock_guard lock(mutex_);
    for (auto& s : active_) s->request_stop();
}

void BackgroundJobs::wait() { pool_.waitForDone(); }

}  // namespace meshwork::gui
