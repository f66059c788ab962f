// Opens two traces and computes their statistics and comparison on a worker thread (a
// full scan of each: seconds for millions of events), then hands the result to the UI
// thread. Errors (a missing or corrupt file) come back as a message naming the file.
#pragma once

#include <QObject>
#include <QThreadPool>

#include <memory>

#include "compare/comparison_data.h"

namespace meshwork::gui {

class ComparisonLoader : public QObject {
    Q_OBJECT
public:
    explicit ComparisonLoader(QObject* parent = nullptr);
    ~ComparisonLoader() override;
    void load(const QString& predicted_path, const QString& measured_path);
    void wait();

    // The same work, on the calling thread (the worker's body; tests). Throws on errors.
    static std::shared_ptr<const ComparisonData> load_now(const QString& predicted_path,
                                                          const QString& measured_path);

signals:
    void loaded(std::shared_ptr<const meshwork::gui::ComparisonData> data);
    void failed(const QString& message);

private:
    QThreadPool pool_;
};

}  // namespace meshwork::gui
