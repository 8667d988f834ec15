// Installs the translators of the chosen language (the app's own .qm files, built by
// qt_add_translations into the resources under :/i18n, and Qt's own for standard dialogs).
// Switching is live: installing a translator sends LanguageChange to every widget.
#pragma once

#include <QString>
#include <QTranslator>
#include <memory>

class QCoreApplication;

namespace llmwb {

class TranslationLoader {
  public:
    explicit TranslationLoader(QCoreApplication& app);
    ~TranslationLoader();

    // code: "" = the system locale, "en", "zh_CN". Returns the language in effect.
    QString apply(const QString& code);

  private:
    QCoreApplication& app_;
    std::unique_ptr<QTranslator> appTranslator_;
    std::unique_ptr<QTranslator> qtTranslator_;
};

} // namespace llmwb
