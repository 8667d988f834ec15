#include "app/gui/database_startup.h"

#include <QApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QMessageBox>
#include <QPushButton>
#include <QTemporaryDir>

#include "app/services/database.h"
#include "app/services/db_salvage.h"
#include "app/services/instance_lock.h"

namespace llmwb {

namespace {

QString appTitle() {
    return ChatDatabaseStartup::tr("LLM Workbench");
}

} // namespace

ChatDatabaseStartup::ChatDatabaseStartup() = default;
ChatDatabaseStartup::~ChatDatabaseStartup() = default;
ChatDatabaseStartup::ChatDatabaseStartup(ChatDatabaseStartup&&) noexcept = default;
ChatDatabaseStartup& ChatDatabaseStartup::operator=(ChatDatabaseStartup&&) noexcept = default;

QString ChatDatabaseStartup::activationName(const QString& dataDir) {
    const QString canonical = QFileInfo(dataDir).canonicalFilePath();
    const QByteArray key = (canonical.isEmpty() ? dataDir : canonical).toUtf8();
    return QStringLiteral("llmwb-") +
           QString::fromLatin1(QCryptographicHash::hash(key, QCryptographicHash::Sha1).toHex());
}

void ChatDatabaseStartup::listenForActivation(QWidget* window) {
    if (!lock || !lock->isLocked())
        return;
    const QString name = activationName(lock->dataDir());
    // We hold the folder's lock: a socket file left by a crashed instance is nobody's.
    QLocalServer::removeServer(name);
    activation = std::make_unique<QLocalServer>();
    activation->setSocketOptions(QLocalServer::UserAccessOption);
    if (!activation->listen(name)) {
        activation.reset();
        return;
    }
    QObject::connect(activation.get(), &QLocalServer::newConnection, window, [this, window] {
        while (QLocalSocket* socket = activation->nextPendingConnection()) {
            QObject::connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            socket->disconnectFromServer();
            window->setWindowState((window->windowState() & ~Qt::WindowMinimized) |
                                   Qt::WindowActive);
            window->show();
            window->raise();
            window->activateWindow();
        }
    });
}

ChatDatabaseStartup ChatDatabaseStartup::open(const QString& dataDir) {
    ChatDatabaseStartup s;
    const QString path = QDir(dataDir).filePath(QStringLiteral("llmwb.sqlite"));

    // Two instances on one folder would interleave their turns in the same conversations.
    s.lock = std::make_unique<InstanceLock>(dataDir);
    const InstanceLock::Result locked = s.lock->tryAcquire();
    if (locked == InstanceLock::Result::HeldByOther) {
        // Bring the running one to the front, then say why this one does not start.
        QLocalSocket socket;
        socket.connectToServer(activationName(dataDir));
        socket.waitForConnected(1000);
        QMessageBox::critical(
            nullptr, appTitle(),
            tr("%1\n\nOnly one LLM Workbench can use a data folder at a time (two would mix "
               "their messages in the same conversations). Switch to the one that is running, "
               "or start this one with another folder: --data-dir DIR.")
                .arg(s.lock->errorString()));
        s.quit = true;
        s.exitCode = 1;
        return s;
    }
    // No lock file (a read-only folder): the database below says what is wrong, if anything.

    s.db = std::make_unique<Database>(path);
    bool opened = s.db->open();
    if (!opened && s.db->problem() == Database::Problem::ReadOnly) {
        const QString error = s.db->errorString();
        QMessageBox box(QMessageBox::Warning, appTitle(),
                        tr("%1\n\nYou can open it read-only to read your chats: sending, editing "
                           "and deleting are disabled. Or quit, make the file and its folder "
                           "writable, and start again.")
                            .arg(error));
        QPushButton* readOnly = box.addButton(tr("Open read-only"), QMessageBox::AcceptRole);
        box.addButton(tr("Quit"), QMessageBox::RejectRole);
        box.setDefaultButton(readOnly);
        box.exec();
        if (box.clickedButton() != readOnly) {
            s.quit = true;
            s.exitCode = 1;
            return s;
        }
        if (s.db->openReadOnly()) {
            s.readOnlyReason = error;
            return s;
        }
    }

    // A damaged file: SQLite refuses it, or it opens and the quick check finds damage (queries
    // would fail, and the conversation list would be empty).
    QString damage;
    if (opened) {
        damage = s.db->quickCheck(8);
        if (damage == QLatin1String("ok"))
            return s;
    } else if (s.db->problem() == Database::Problem::Damaged) {
        damage = s.db->errorString();
    }
    if (!damage.isEmpty()) {
        QMessageBox box(QMessageBox::Critical, appTitle(),
                        tr("The chat database %1 is damaged: SQLite cannot read all of it.\n\n"
                           "Salvage copies every conversation and message that can still be "
                           "read into a new database; the damaged file is kept, renamed with "
                           "the date and time. You can also open it as it is (some chats may be "
                           "missing, and changes may fail) or quit and restore a backup.")
                            .arg(QDir::toNativeSeparators(path)));
        box.setDetailedText(damage);
        QPushButton* salvage = box.addButton(tr("Salvage"), QMessageBox::AcceptRole);
        QPushButton* asIs =
            opened ? box.addButton(tr("Open as it is"), QMessageBox::ActionRole) : nullptr;
        box.addButton(tr("Quit"), QMessageBox::RejectRole);
        box.setDefaultButton(salvage);
        box.exec();
        if (asIs && box.clickedButton() == asIs)
            return s;
        if (box.clickedButton() != salvage) {
            s.quit = true;
            s.exitCode = 1;
            return s;
        }
        s.db->close();
        QApplication::setOverrideCursor(Qt::WaitCursor);
        const SalvageReport report = DbSalvage::salvage(path);
        QApplication::restoreOverrideCursor();
        if (report.ok)
            QMessageBox::information(nullptr, appTitle(), report.summary());
        else
            QMessageBox::warning(nullptr, appTitle(), report.summary());
        opened = s.db->open();
        if (opened)
            return s;
    }
    if (opened)
        return s;

    // Anything else: the app still runs, on a temporary database, and says so; the file that
    // failed is left untouched.
    const QString error = s.db->errorString();
    s.tempDir = std::make_unique<QTemporaryDir>();
    s.db = std::make_unique<Database>(s.tempDir->filePath(QStringLiteral("chat.sqlite")));
    if (!s.tempDir->isValid() || !s.db->open()) {
        QMessageBox::critical(nullptr, appTitle(),
                              tr("The chat database cannot be opened:\n%1").arg(error));
        s.quit = true;
        s.exitCode = 1;
        return s;
    }
    QMessageBox::warning(nullptr, appTitle(),
                         tr("The chat database cannot be opened:\n%1\n\nChats of this session "
                            "will not be saved.")
                             .arg(error));
    return s;
}

} // namespace llmwb
