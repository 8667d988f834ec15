#include "app/services/instance_lock.h"

#include <QDir>

namespace llmwb {

InstanceLock::InstanceLock(const QString& dataDir)
    : dir_(dataDir), path_(QDir(dataDir).filePath(QLatin1String(kFileName))) {}

InstanceLock::~InstanceLock() {
    release();
}

void InstanceLock::release() {
    if (lock_ && lock_->isLocked())
        lock_->unlock();
    lock_.reset();
}

InstanceLock::Result InstanceLock::tryAcquire() {
    if (isLocked())
        return Result::Acquired;
    ownerPid_ = 0;
    ownerHost_.clear();
    error_.clear();
    lock_ = std::make_unique<QLockFile>(path_);
    // 0: stale only when the owning process is gone (QLockFile checks its PID on this host),
    // never by age (the default 30 s would let a second instance take a running one's lock).
    lock_->setStaleLockTime(0);
    if (lock_->tryLock(0))
        return Result::Acquired;
    const QLockFile::LockError err = lock_->error();
    if (err == QLockFile::LockFailedError) {
        QString app;
        if (!lock_->getLockInfo(&ownerPid_, &ownerHost_, &app)) {
            ownerPid_ = 0;
            ownerHost_.clear();
        }
        error_ =
            ownerPid_ > 0
                ? tr("The data folder %1 is in use by another LLM Workbench (process %2 on %3).")
                      .arg(QDir::toNativeSeparators(dir_))
                      .arg(ownerPid_)
                      .arg(ownerHost_.isEmpty() ? tr("this computer") : ownerHost_)
                : tr("The data folder %1 is in use by another LLM Workbench.")
                      .arg(QDir::toNativeSeparators(dir_));
        lock_.reset();
        return Result::HeldByOther;
    }
    error_ = err == QLockFile::PermissionError
                 ? tr("Cannot create the lock file %1: permission denied or a read-only folder.")
                       .arg(QDir::toNativeSeparators(path_))
                 : tr("Cannot create the lock file %1.").arg(QDir::toNativeSeparators(path_));
    lock_.reset();
    return Result::Error;
}

} // namespace llmwb
