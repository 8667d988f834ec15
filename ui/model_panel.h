// The Model dock: metadata of the loaded model, Open (a .gguf file or a Hugging Face folder;
// drag & drop onto the panel or the window), recent models (missing files marked, removable),
// and the loading state (progress with a Cancel button).
#pragma once

#include <QWidget>

#include "app/services/generation_types.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QScrollArea;
class QListWidget;
class QDragEnterEvent;
class QDropEvent;
class QMimeData;
class QProgressBar;
class QPushButton;

namespace llmwb {

class ModelPanel : public QWidget {
    Q_OBJECT

  public:
    explicit ModelPanel(QWidget* parent = nullptr);

    // Most recent first. Paths that no longer exist are listed as missing (not openable).
    void setRecentModels(const QStringList& paths);
    QStringList recentModels() const;
    bool isLoading() const { return loading_; }
    QString fieldText(const char* objectName) const; // for tests
    QComboBox* deviceCombo() const { return device_; }
    QComboBox* weightDtypeCombo() const { return weights_; }
    // Puts a widget (the chat backend box) at the top of the panel; the panel owns it.
    void setTopWidget(QWidget* w);
    // "auto", "cpu" or "cuda".
    QString devicePreference() const;
    QString cudaUnavailableReason() const { return cudaReason_; }

    // The model path a drop carries: one local .gguf file or one folder; "" otherwise.
    static QString modelPathFromMime(const QMimeData* mime);
    // What a chosen path opens: a .gguf file or a folder as it is, a Hugging Face config.json
    // as its folder ("" for "").
    static QString modelPathForFile(const QString& path);
    // The open dialog's filter: GGUF files and config.json together, then each alone.
    static QString openDialogFilter();

  public slots:
    void setLoading(const QString& path);
    void setModel(const llmwb::ModelMetadata& m);
    void setLoadFailed(const QString& message);
    // 0..100 (-1 = unknown) and what is being done ("Reading weights", ...). Shows the Cancel
    // button; setModel / setLoadFailed end the loading state.
    void setLoadProgress(int percent, const QString& stage);
    // Shows the choice without emitting deviceChosen().
    void setDevicePreference(const QString& preference);
    // "auto" or "bfloat16" (`llmwb --dtype`), shown without emitting weightDtypeChosen().
    void setWeightDtype(const QString& dtype);
    // Unavailable: the CUDA entry is disabled and the reason shown (tooltip and a note).
    void setCudaAvailability(bool available, const QString& reason);

  signals:
    void openRequested(const QString& path);
    // The user pressed Cancel while a model was loading.
    void cancelLoadRequested();
    // The user removed a recent model from the list (the panel already dropped it; the owner
    // of the persisted list should forget it too).
    void removeRecentRequested(const QString& path);
    // The user chose a device ("auto", "cpu", "cuda").
    void deviceChosen(const QString& preference);
    // The user chose how the float weights run ("auto": as stored, "bfloat16": cast at load).
    void weightDtypeChosen(const QString& dtype);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

  private:
    QWidget* content_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    void retranslate();
    void showMetadata();
    QLabel* addField(const char* objectName);
    void setBusy(bool busy);
    void updateRecentItems();
    void removeSelectedRecent();
    void updateDeviceItems();

    bool loading_ = false;
    QString loadingPath_;
    QString loadStage_;
    int loadPercent_ = -1;
    QString error_;

    ModelMetadata model_;
    bool loaded_ = false;
    QFormLayout* form_;
    QList<QLabel*> fieldLabels_;
    QLabel* status_;
    QProgressBar* busy_;
    QLabel *name_, *arch_, *deviceInUse_, *params_, *dtypes_, *bpw_, *context_, *shape_, *tmpl_,
        *path_;
    QLabel* deviceTitle_;
    QComboBox* device_;
    QLabel* deviceNote_;
    QLabel* weightsTitle_;
    QComboBox* weights_;
    bool cudaAvailable_ = true; // until told otherwise
    QString cudaReason_;
    QPushButton* openFile_;
    QPushButton* openFolder_;
    QPushButton* cancel_;
    QLabel* recentTitle_;
    QListWidget* recent_;
    QPushButton* removeRecent_;
};

// The tensor groups as a table: translated group name, types with counts, bits per weight
// (rich text for a QLabel).
QString tensorGroupsHtml(const QList<TensorGroupInfo>& groups);
// "Attention", "Feed-forward", ... for the engine's group names (unknown names as they are).
QString tensorGroupName(const QString& group);

// "7.6 B", "494 M", "1.2 K"
QString formatCount(qint64 n);
// "4.1 GiB", "350 MiB"
QString formatBytes(qint64 bytes);

} // namespace llmwb
