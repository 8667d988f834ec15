// LocalServerLog: the Local server's live request log as a table model (GUI thread) — one row
// per HTTP request, newest last, at most kMaxRows (the oldest go first). A generation's row
// appears when it starts running (finish "running") and is updated when it is answered.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QString>
#include <QVector>

namespace llmwb {

struct LocalServerLogRow {
    quint64 id = 0;       // the server's request id (RequestLogEntry::id); 0: none
    bool running = false; // started, not answered yet
    QDateTime time;       // arrival
    QString clientAddress;
    int clientPort = 0;
    QString userAgent, method, path;
    int status = 0;
    qint64 promptTokens = -1, completionTokens = -1; // -1: not a generation
    double durationMs = 0;
    QString finishReason;
};

class LocalServerLog : public QAbstractTableModel {
    Q_OBJECT

  public:
    static constexpr int kMaxRows = 1000;
    enum Column {
        Time,
        Client,
        Request,
        Status,
        PromptTokens,
        CompletionTokens,
        Duration,
        Finish,
        ColumnCount
    };

    explicit LocalServerLog(QObject* parent = nullptr);

    // Appends `row`, or updates the row of the same request (id) when it has one.
    void append(const LocalServerLogRow& row);
    void clear();
    const QVector<LocalServerLogRow>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    QVector<LocalServerLogRow> rows_;
};

} // namespace llmwb
