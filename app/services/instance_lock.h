// One app instance per data folder: two instances writing one chat database interleave the
// turns of a conversation. A QLockFile ("llmwb.lock") in the data folder, held while the app
// runs; a lock left by a crashed process (its PID no longer runs) is taken over. Locks are
// never stale by age: an instance may run for days.
#pragma once

#include <QCoreApplication>
#include <QLockFile>
#include <QString>
#include <memory>

namespace llmwb {

class InstanceLock {
    Q_DECLARE_TR_FUNCTIONS(llmwb::InstanceLock)

  public:
    enum class Result { Acquired, HeldByOther, Error };

    explicit InstanceLock(const QString& dataDir);
    ~InstanceLock(); // releases the lock if held

    Result tryAcquire();
    bool isLocked() const { return lock_ && lock_->isLocked(); }
    void release();

    QString lockFilePath() const { return path_; }
    QString dataDir() const { return dir_; }
    // After HeldByOther: the holder (0 / empty when unknown).
    qint64 ownerPid() const { return ownerPid_; }
    QString ownerHost() const { return ownerHost_; }
    // One line for the user: who holds the folder, or why the lock file cannot be made.
    QString errorString() const { return error_; }

    static constexpr const char* kFileName = "llmwb.lock";

  private:
    QString dir_;
    QString path_;
    std::unique_ptr<QLockFile> lock_;
    qint64 ownerPid_ = 0;
    QString ownerHost_;
    QString error_;
};

} // namespace llmwb
