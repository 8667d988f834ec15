// The Model panel's weight types: one row per tensor group (translated name, types with counts,
// bits per weight) and the file's average bits per weight, in English and Simplified Chinese.
#include <QCoreApplication>
#include <QLabel>
#include <QTranslator>
#include <QtTest>

#include "ui/model_panel.h"

using namespace llmwb;

namespace {

ModelMetadata quantizedModel() {
    ModelMetadata m;
    m.name = QStringLiteral("Tiny Q4_K_M");
    m.architecture = QStringLiteral("qwen2");
    m.format = QStringLiteral("gguf");
    m.path = QStringLiteral("/models/tiny-Q4_K_M.gguf");
    m.contextLength = 4096;
    m.dtypeSummary = {QStringLiteral("attention: Q4_K ×5, Q6_K ×1")};
    TensorGroupInfo att;
    att.group = QStringLiteral("attention");
    att.typeCounts = {{QStringLiteral("Q4_K"), 5}, {QStringLiteral("Q6_K"), 1}};
    att.parameters = 6 * 256;
    att.bytes = 5 * 144 + 210; // 5 Q4_K blocks + 1 Q6_K block: (720 + 210) * 8 / 1536 = 4.84
    TensorGroupInfo norm;
    norm.group = QStringLiteral("norm");
    norm.typeCounts = {{QStringLiteral("F32"), 5}};
    norm.parameters = 1280;
    norm.bytes = 1280 * 4;
    TensorGroupInfo odd;
    odd.group = QStringLiteral("<custom>"); // an unknown group is shown as it is, escaped
    odd.typeCounts = {{QStringLiteral("Q8_0"), 1}};
    odd.parameters = 32;
    odd.bytes = 34;
    m.tensorGroups = {att, norm, odd};
    m.matrixBitsPerWeight = 5.0893;
    m.bitsPerWeight = 5.1185;
    return m;
}

} // namespace

class TestUiModelTypes : public QObject {
    Q_OBJECT

  private slots:
    void groupsAndBitsPerWeight() {
        ModelPanel panel;
        panel.setModel(quantizedModel());
        const QString types = panel.fieldText("modelDtypes");
        QVERIFY2(types.contains(QStringLiteral("Attention")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("Q4_K&nbsp;×5, Q6_K&nbsp;×1")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("4.84 bpw")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("Norms")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("32.00 bpw")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("&lt;custom&gt;")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("8.50 bpw")), qPrintable(types));
        QCOMPARE(panel.fieldText("modelBitsPerWeight"),
                 QStringLiteral("5.09 over the weight matrices, 5.12 over all tensors"));

        // Metadata without groups (an older sender): the summary lines, bpw unknown.
        ModelMetadata plain = quantizedModel();
        plain.tensorGroups.clear();
        panel.setModel(plain);
        QCOMPARE(panel.fieldText("modelDtypes"), QStringLiteral("attention: Q4_K ×5, Q6_K ×1"));
        QCOMPARE(panel.fieldText("modelBitsPerWeight"), QStringLiteral("unknown"));
    }

    void groupNames() {
        QCOMPARE(tensorGroupName(QStringLiteral("ffn")), QStringLiteral("Feed-forward"));
        QCOMPARE(tensorGroupName(QStringLiteral("embedding")), QStringLiteral("Embedding"));
        QCOMPARE(tensorGroupName(QStringLiteral("output")), QStringLiteral("Output"));
        QCOMPARE(tensorGroupName(QStringLiteral("rope_freqs")), QStringLiteral("RoPE frequencies"));
        QCOMPARE(tensorGroupName(QStringLiteral("other")), QStringLiteral("other"));
    }

    void chinese() {
        ModelPanel panel;
        panel.setModel(quantizedModel());
        QTranslator zh;
        QVERIFY(zh.load(QStringLiteral(":/i18n/llmwb_zh_CN.qm")));
        QCoreApplication::installTranslator(&zh);
        QCoreApplication::processEvents();
        const QString types = panel.fieldText("modelDtypes");
        QVERIFY2(types.contains(QStringLiteral("注意力")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("归一化")), qPrintable(types));
        QVERIFY2(types.contains(QStringLiteral("4.84 位/权重")), qPrintable(types));
        QVERIFY2(panel.fieldText("modelBitsPerWeight").contains(QStringLiteral("权重矩阵")),
                 qPrintable(panel.fieldText("modelBitsPerWeight")));
        QCOMPARE(tensorGroupName(QStringLiteral("ffn")), QStringLiteral("前馈网络"));
        const auto labels = panel.findChildren<QLabel*>();
        bool found = false;
        for (const QLabel* l : labels)
            found = found || l->text() == QStringLiteral("每权重位数");
        QVERIFY(found);
        QCoreApplication::removeTranslator(&zh);
    }
};

QTEST_MAIN(TestUiModelTypes)
#include "tst_ui_model_types.moc"
