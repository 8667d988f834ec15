#include "app/gui/translation_loader.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>

namespace llmwb {

TranslationLoader::TranslationLoader(QCoreApplication& app) : app_(app) {}

TranslationLoader::~TranslationLoader() {
    if (appTranslator_)
        QCoreApplication::removeTranslator(appTranslator_.get());
    if (qtTranslator_)
        QCoreApplication::removeTranslator(qtTranslator_.get());
}

QString TranslationLoader::apply(const QString& code) {
    if (appTranslator_)
        QCoreApplication::removeTranslator(appTranslator_.get());
    if (qtTranslator_)
        QCoreApplication::removeTranslator(qtTranslator_.get());
    appTranslator_ = std::make_unique<QTranslator>();
    qtTranslator_ = std::make_unique<QTranslator>();
    const QLocale locale = code.isEmpty() ? QLocale::system() : QLocale(code);
    QLocale::setDefault(locale);
    // English is the source language; llmwb_en.qm holds its plural forms ("%n answer(s)" ->
    // "1 answer" / "2 answers"), so a language without a translation (and the C locale) falls
    // back to it rather than to the source text.
    if (!appTranslator_->load(locale, QStringLiteral("llmwb"), QStringLiteral("_"),
                              QStringLiteral(":/i18n")) &&
        !appTranslator_->load(QStringLiteral("llmwb_en"), QStringLiteral(":/i18n"))) {
        appTranslator_.reset();
    } else {
        QCoreApplication::installTranslator(appTranslator_.get());
    }
    if (qtTranslator_->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                            QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qtTranslator_.get());
    } else {
        qtTranslator_.reset();
    }
    return appTranslator_ ? appTranslator_->language() : QStringLiteral("en");
}

} // namespace llmwb
