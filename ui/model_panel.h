// The Model dock: metadata of the loaded model, Open (a .gguf file or a Hugging Face folder;
// drag & drop onto the window works too), recent models, and the loading state.
#pragma once

#include <QWidget>

#include "app/services/generation_types.h"

class QFormLayout;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace llmwb {

class ModelPanel : public QWidget {
    Q_OBJECT

public:
    explicit ModelPanel(QWidget* parent = nullptr);

    void setRecentModels(const QStringList& paths);
    QString fieldText(const char* objectName) const;  // for tests

public slots:
    void setLoading(const QString& path);
    void setModel(const llmwb::ModelMetadata& m);
    void setLoadFailed(const QString& message);

signals:
    void openRequested(const QString& path);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void showMetadata();
    QLabel* addField(const char* objectName);

    ModelMetadata model_;
    bool loaded_ = false;
    QFormLayout* form_;
    QList<QLabel*> fieldLabels_;
    QLabel* status_;
    QProgressBar* busy_;
    QLabel *name_, *arch_, *params_, *dtypes_, *context_, *shape_, *tmpl_, *path_;
    QPushButton* openFile_;
    QPushButton* openFolder_;
    QLabel* recentTitle_;
    QListWidget* recent_;
};

// "7.6 B", "494 M", "1.2 K"
QString formatCount(qint64 n);
// "4.1 GiB", "350 MiB"
QString formatBytes(qint64 bytes);

}  // namespace llmwb
