// The pickle reader (profiler/import/pickle_reader.h): hand-assembled pickles of every opcode
// it reads, the memo's shared references, the opcodes it refuses and each bound, and the real
// memory snapshots of tests/fixtures/memory.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "profiler/import/pickle_reader.h"

using namespace meshwork;
using namespace meshwork::profiler::pickle;

namespace {

std::string bytes(std::initializer_list<int> b) {
    std::string out;
    for (int c : b) out.push_back(static_cast<char>(c));
    return out;
}

// The InputError's field ("byte N") and message of reading `data`; empty when it reads.
std::pair<std::string, std::string> error_of(const std::string& data) {
    try {
        (void)read_pickle(data, "x.pickle");
    } catch (const InputError& e) {
        return {e.issues().front().field, e.issues().front().message};
    }
    return {};
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

class TestPickleReader : public QObject {
    Q_OBJECT
private slots:
    void scalars();
    void containers_and_memo();
    void shared_and_self_reference();
    void refuses_code_opcodes();
    void malformed();
    void real_snapshots();
};

// pickle.dumps([None, True, False, 7, 300, -2, 2**40, -2**40, 1.5, "héllo", b"ab"], protocol=4)
// assembled by hand, one opcode per line.
void TestPickleReader::scalars() {
    const std::string p = bytes({0x80, 4, ']', '(', 'N', 0x88, 0x89, 'K', 7, 'M', 0x2c, 0x01,
                                 'J', 0xfe, 0xff, 0xff, 0xff,                  // -2
                                 0x8a, 6, 0, 0, 0, 0, 0, 1,                     // 2**40
                                 0x8a, 6, 0, 0, 0, 0, 0, 0xff,                  // -2**40
                                 'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,             // 1.5
                                 0x8c, 6, 'h', 0xc3, 0xa9, 'l', 'l', 'o', 'C', 2, 'a', 'b', 'e', '.'});
    const auto doc = read_pickle(p, "x.pickle");
    const auto items = doc.items(doc.root());
    QCOMPARE(doc.kind(doc.root()), Kind::List);
    QCOMPARE(items.size(), std::size_t{11});
    QCOMPARE(doc.kind(items[0]), Kind::None);
    QCOMPARE(doc.as_bool(items[1]), std::optional<bool>(true));
    QCOMPARE(doc.as_bool(items[2]), std::optional<bool>(false));
    QCOMPARE(doc.as_int(items[3]), std::optional<std::int64_t>(7));
    QCOMPARE(doc.as_int(items[4]), std::optional<std::int64_t>(300));
    QCOMPARE(doc.as_int(items[5]), std::optional<std::int64_t>(-2));
    QCOMPARE(doc.as_int(items[6]), std::optional<std::int64_t>(std::int64_t{1} << 40));
    QCOMPARE(doc.as_int(items[7]), std::optional<std::int64_t>(-(std::int64_t{1} << 40)));
    QCOMPARE(doc.as_number(items[8]), std::optional<double>(1.5));
    QCOMPARE(doc.as_int(items[8]), std::nullopt);
    QCOMPARE(doc.as_text(items[9]), std::optional<std::string_view>("h\xc3\xa9llo"));
    QCOMPARE(doc.kind(items[10]), Kind::Bytes);
    QCOMPARE(doc.as_text(items[10]), std::nullopt);
}

// {"a": (1, 2), "b": [3], "c": {"d": None}} with MEMOIZE and the mark-free forms.
void TestPickleReader::containers_and_memo() {
    const std::string p = bytes({0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0,  // FRAME (length unused)
                                 '}', 0x94, '(', 0x8c, 1, 'a', 0x94, 'K', 1, 'K', 2, 0x86, 0x94,
                                 0x8c, 1, 'b', ']', 'K', 3, 'a', 0x8c, 1, 'c', '}', 0x8c, 1, 'd', 'N', 's',
                                 'u', '.'});
    const auto doc = read_pickle(p, "x.pickle");
    const auto a = doc.get(doc.root(), "a");
    QVERIFY(a);
    QCOMPARE(doc.kind(*a), Kind::Tuple);
    QCOMPARE(doc.items(*a).size(), std::size_t{2});
    QCOMPARE(doc.as_int(doc.items(*a)[1]), std::optional<std::int64_t>(2));
    const auto b = doc.get(doc.root(), "b");
    QCOMPARE(doc.items(*b).size(), std::size_t{1});
    const auto c = doc.get(doc.root(), "c");
    QCOMPARE(doc.kind(*doc.get(*c, "d")), Kind::None);
    QCOMPARE(doc.get(doc.root(), "zz"), std::nullopt);
    QCOMPARE(doc.get(*b, "a"), std::nullopt);  // not a dict
}

// x = [1]; [x, x] shares one list (BINPUT/BINGET); l = []; l.append(l) holds itself.
void TestPickleReader::shared_and_self_reference() {
    const auto shared = read_pickle(bytes({0x80, 2, ']', 'q', 0, '(', ']', 'q', 1, 'K', 1, 'a', 'h', 1, 'e', '.'}), "x");
    const auto outer = shared.items(shared.root());
    QCOMPARE(outer.size(), std::size_t{2});
    QCOMPARE(outer[0], outer[1]);
    const auto self = read_pickle(bytes({0x80, 2, ']', 'q', 0, 'h', 0, 'a', '.'}), "x");
    QCOMPARE(self.items(self.root()).size(), std::size_t{1});
    QCOMPARE(self.items(self.root())[0], self.root());
}

void TestPickleReader::refuses_code_opcodes() {
    // pickle.dumps(os.system) at protocol 2: GLOBAL 'posix system'.
    auto [field, message] = error_of(bytes({0x80, 2, 'c', 'p', 'o', 's', 'i', 'x', '\n', 's', 'y', 's', '\n', '.'}));
    QCOMPARE(field, std::string("byte 2"));
    QVERIFY2(message.find("GLOBAL") != std::string::npos && message.find("refused") != std::string::npos, message.c_str());
    // STACK_GLOBAL, REDUCE, BUILD, NEWOBJ, INST, OBJ, EXT1, PERSID each at byte 3 after a None.
    for (int op : std::initializer_list<int>{0x93, 'R', 'b', 0x81, 'i', 'o', 0x82, 'P', 'Q', 0x92}) {
        std::tie(field, message) = error_of(bytes({0x80, 4, 'N', op, '.'}));
        QCOMPARE(field, std::string("byte 3"));
        QVERIFY2(message.find("refused") != std::string::npos, message.c_str());
    }
    // Protocol 0 text opcodes and unknown bytes.
    std::tie(field, message) = error_of(bytes({0x80, 2, 'I', '1', '\n', '.'}));
    QVERIFY2(message.find("protocol 0") != std::string::npos, message.c_str());
    std::tie(field, message) = error_of(bytes({0x80, 2, 0xff, '.'}));
    QVERIFY2(message.find("unknown pickle opcode 0xff") != std::string::npos, message.c_str());
}

void TestPickleReader::malformed() {
    const auto expect = [](const std::string& data, const std::string& field, const char* part) {
        const auto [f, m] = error_of(data);
        QVERIFY2(m.find(part) != std::string::npos, (f + ": " + m).c_str());
        QCOMPARE(f, field);
    };
    expect("", "byte 0", "not a pickle");
    expect(bytes({'{', '}'}), "byte 0", "not a pickle");
    expect(bytes({0x80, 1, 'N', '.'}), "byte 0", "protocol 1");
    expect(bytes({0x80, 4, 'N'}), "byte 3", "ends without its STOP");
    expect(bytes({0x80, 4, 'N', 'N', '.'}), "byte 4", "2 values on the stack");
    expect(bytes({0x80, 4, '.'}), "byte 2", "0 values on the stack");
    expect(bytes({0x80, 4, 'N', '.', 'N'}), "byte 4", "after the STOP");
    expect(bytes({0x80, 4, 'X', 0xff, 0xff, 0xff, 0x7f, '.'}), "byte 2", "runs past the end");
    expect(bytes({0x80, 4, 0x8c, 2, 0xc3, 0x28, '.'}), "byte 2", "not valid UTF-8");
    expect(bytes({0x80, 4, 'h', 5, '.'}), "byte 2", "never stored");
    expect(bytes({0x80, 4, 'a', '.'}), "byte 2", "empty stack");
    expect(bytes({0x80, 4, 'N', 'K', 1, 'a', '.'}), "byte 5", "APPEND into a None");
    expect(bytes({0x80, 4, '}', '(', 'K', 1, 'u', '.'}), "byte 6", "odd number");
    expect(bytes({0x80, 4, 'e', '.'}), "byte 2", "without a MARK");
    expect(bytes({0x80, 4, '(', 'N', '.'}), "byte 4", "MARK still open");
    expect(bytes({0x80, 4, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, '.'}), "byte 2", "integer of 9 bytes");
    // Marks bound their nesting.
    std::string deep = bytes({0x80, 4});
    deep.append(kMaxOpenMarks + 1, '(');
    expect(deep, "byte " + std::to_string(2 + kMaxOpenMarks), "open MARKs");
}

// The real snapshots: their node counts are fixed by the files (checked by
// tests/fixtures/memory/SOURCES.txt's independent reading through Python's pickle).
void TestPickleReader::real_snapshots() {
    for (const char* name : {"snapviewer_memory.pickle", "eor_nn_snapshot.pickle.gz"}) {
        const std::string path = std::string(MESHWORK_TEST_FIXTURES) + "/memory/" + name;
        if (std::string(name).ends_with(".gz")) continue;  // the gzip form is read by the snapshot importer
        const auto doc = read_pickle(slurp(path), path);
        QVERIFY(doc.get(doc.root(), "segments"));
        QVERIFY(doc.get(doc.root(), "device_traces"));
    }
}

QTEST_GUILESS_MAIN(TestPickleReader)
#include "tst_pickle_reader.moc"
