// parse_json_text on hostile text: duplicated keys are refused naming their path, NaN and
// Infinity are not JSON, numbers beyond double's range and deep nesting are InputErrors.
#include <QTest>

#include "core/common/error.h"
#include "core/common/json_reader.h"
#include "core/common/utf8.h"

using namespace meshwork;

namespace {

// The field and message of the InputError `text` raises, or "no error".
QString error_of(const char* text) {
    try {
        (void)parse_json_text(text, "f.json");
    } catch (const InputError& e) {
        const auto& issue = e.issues().front();
        return QString::fromStdString(issue.field + ": " + issue.message);
    }
    return "no error";
}

}  // namespace

class TestJsonReader : public QObject {
    Q_OBJECT
private slots:
    void duplicated_keys_data();
    void duplicated_keys();
    void not_numbers_data();
    void not_numbers();
    void same_key_in_sibling_objects_is_fine();
    void utf8_validation();
};

void TestJsonReader::duplicated_keys_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("field");
    QTest::newRow("top level") << R"({"a": 1, "a": 2})" << "a";
    QTest::newRow("nested") << R"({"parallel": {"tp": 2, "pp": 1, "tp": 4}})" << "parallel.tp";
    QTest::newRow("in an array") << R"({"x": [1, {"q": 1}, {"q": 1, "q": 2}]})" << "x[2].q";
    QTest::newRow("same value") << R"({"a": 1, "a": 1})" << "a";
    QTest::newRow("top-level array") << R"([{"k": 1, "k": 2}])" << "[0].k";
}

void TestJsonReader::duplicated_keys() {
    QFETCH(QString, text);
    QFETCH(QString, field);
    QCOMPARE(error_of(text.toUtf8().constData()), field + ": duplicated key (a JSON object may name a key once)");
}

void TestJsonReader::not_numbers_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("NaN") << R"({"a": NaN})" << "malformed JSON";
    QTest::newRow("Infinity") << R"({"a": Infinity})" << "malformed JSON";
    QTest::newRow("-Infinity") << R"({"a": -Infinity})" << "malformed JSON";
    QTest::newRow("1e400") << R"({"a": 1e400})" << "number overflow";
    QTest::newRow("deep") << QString(200, '[') + QString(200, ']') << "nested deeper than";
}

void TestJsonReader::not_numbers() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    const QString error = error_of(text.toUtf8().constData());
    QVERIFY2(error.contains(message), qPrintable(error));
}

void TestJsonReader::same_key_in_sibling_objects_is_fine() {
    QCOMPARE(error_of(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]})"), QString("no error"));
}

void TestJsonReader::utf8_validation() {
    QVERIFY(is_valid_utf8("plain ascii"));
    QVERIFY(is_valid_utf8("gemm \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    QVERIFY(is_valid_utf8(std::string_view("a\0b", 3)));
    QVERIFY(!is_valid_utf8("\xc0\xaf"));          // overlong '/'
    QVERIFY(!is_valid_utf8("\xe0\x80\xaf"));      // overlong, three bytes
    QVERIFY(!is_valid_utf8("\x80"));              // lone continuation byte
    QVERIFY(!is_valid_utf8("\xff"));
    QVERIFY(!is_valid_utf8("\xed\xa0\x80"));      // a surrogate
    QVERIFY(!is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
    QVERIFY(!is_valid_utf8("ab\xe2\x82"));        // cut short
}

QTEST_GUILESS_MAIN(TestJsonReader)
#include "tst_json_reader.moc"
