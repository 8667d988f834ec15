// LocalServerPanel: the Local server dock — a toggle, the host, port and API key (hidden, with a
// "copy curl example" button), the URL clients use, a warning when the host is reachable from
// other machines, and the live request log. Edits are saved in the settings and apply at once
// (a running server restarts on its new address).
#pragma once

#include <QWidget>

#include "app/services/app_settings.h"

class QCheckBox;
class QDockWidget;
class QMainWindow;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QToolButton;

namespace llmwb {

class LocalServer;

class LocalServerPanel : public QWidget {
    Q_OBJECT

  public:
    LocalServerPanel(LocalServer& server, AppSettings& settings, QWidget* parent = nullptr);

    // Starts the server when the settings say it was on (at startup).
    void restore();
    // The settings as the controls show them.
    LocalServerSettings currentSettings() const;
    // The text the "Copy curl example" button copies.
    QString curlExample() const;
    QString statusText() const;
    bool warningShown() const;

  protected:
    void changeEvent(QEvent* e) override;

  private:
    void apply(); // saves the controls' settings; (re)starts or stops the server
    void updateState();
    void retranslate();

    LocalServer& server_;
    AppSettings& settings_;
    QCheckBox* enabled_;
    QLabel *hostLabel_, *portLabel_, *keyLabel_, *status_, *url_, *warning_, *logTitle_;
    QLineEdit *host_, *key_;
    QSpinBox* port_;
    QToolButton* showKey_;
    QPushButton* copyCurl_;
    QTableView* log_;
};

// The panel in a dock ("localServerDock") of `window`, tabbed with its Tuning dock, with its
// toggle in the View menu (the menu named "viewMenu"). Returns the dock.
QDockWidget* addLocalServerDock(QMainWindow& window, LocalServer& server, AppSettings& settings);

} // namespace llmwb
