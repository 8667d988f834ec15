// Opening the chat database at start, with the user deciding where a choice is needed: one
// instance per data folder (a second start is refused, naming the folder and the running
// process), a read-only file (open it read-only on purpose, or quit), a damaged file (a quick
// check at start; salvage what is readable into a new file and keep the original, open it as it
// is, or quit), and any other failure (a temporary database for this session).
#pragma once

#include <QCoreApplication>
#include <QString>
#include <memory>

class QLocalServer;
class QTemporaryDir;
class QWidget;

namespace llmwb {

class Database;
class InstanceLock;

struct ChatDatabaseStartup {
    Q_DECLARE_TR_FUNCTIONS(llmwb::ChatDatabaseStartup)

  public:
    ChatDatabaseStartup();
    ~ChatDatabaseStartup();
    ChatDatabaseStartup(ChatDatabaseStartup&&) noexcept;
    ChatDatabaseStartup& operator=(ChatDatabaseStartup&&) noexcept;

    // Shows the message boxes; the result holds what the app runs on.
    static ChatDatabaseStartup open(const QString& dataDir);
    // The running instance brings window to the front when a second start on its data folder
    // asks it to (a local socket named after the folder).
    void listenForActivation(QWidget* window);
    static QString activationName(const QString& dataDir);

    std::unique_ptr<InstanceLock> lock;
    std::unique_ptr<QLocalServer> activation;
    std::unique_ptr<QTemporaryDir> tempDir; // the session's temporary database, if used
    std::unique_ptr<Database> db;           // open (read-only when readOnlyReason is set)
    QString readOnlyReason;                 // non-empty: opened read-only on purpose
    bool quit = false;                      // the user chose to quit (or another instance runs)
    int exitCode = 0;
};

} // namespace llmwb
