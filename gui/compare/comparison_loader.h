// Opens two traces and computes their statistics and comparison on a worker thread (a
// full scan of each: seconds for millions of events), then hands the result to the UI
// thread. Errors (a missing or corrupt file) come back as a message naming the file.
#pragma once

#include <QObject>

#include <functional>
#include <memory>

#include "gui/app/background_jobs.h"
#include "gui/compare/comparison_data.h"

namespace meshwork::gui {

// Whether the two paths are (predicted, measured) as given (Swap, a re-comparison), or two
// traces whose roles come from the traces themselves (trace_roles.h).
enum class RoleOrder { AsGiven, FromTraces };

class ComparisonLoader : public QObject {
    Q_OBJECT
public:
    explicit ComparisonLoader(QObject* parent = nullptr);
    // `warmup_steps`: the first steps of each trace left out (meshwork-cli --warmup-steps).
    void load(const QString& predicted_path, const QString& measured_path,
              int warmup_steps = profiler::kDefaultWarmupSteps, RoleOrder order = RoleOrder::AsGiven);
    // Calibrates the cluster of the layout that ran (the one the measured trace carries,
    // else the prediction's) on the measured trace, simulates that layout again on the
    // calibrated cluster into `out_dir`, and compares the new prediction with the
    // measurement (`meshwork-cli calibrate` + `simulate` + `compare` in one step).
    void calibrate(const QString& predicted_path, const QString& measured_path,
                   const QString& out_dir, int warmup_steps = profiler::kDefaultWarmupSteps);
    void wait();

    // The same work, on the calling thread (the worker's body; tests). Throw on errors.
    static std::shared_ptr<const ComparisonData> load_now(
        const QString& predicted_path, const QString& measured_path,
        int warmup_steps = profiler::kDefaultWarmupSteps, RoleOrder order = RoleOrder::AsGiven);
    static std::shared_ptr<const ComparisonData> calibrate_now(
        const QString& predicted_path, const QString& measured_path, const QString& out_dir,
        int warmup_steps = profiler::kDefaultWarmupSteps);

  signals:
    void loaded(std::shared_ptr<const meshwork::gui::ComparisonData> data);
    void failed(const QString& message);

private:
  // Runs `work` on the worker thread; loaded or failed follows on the UI thread.
  void run(std::function<std::shared_ptr<const ComparisonData>()> work);
  BackgroundJobs jobs_;
};

}  // namespace meshwork::gui
