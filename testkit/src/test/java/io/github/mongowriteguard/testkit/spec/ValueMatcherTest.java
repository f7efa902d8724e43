package io.github.mongowriteguard.testkit.spec;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** The runner's matcher fails where the unified format says a match fails, so passing spec tests mean something. */
class ValueMatcherTest {
    private final ValueMatcher matcher = new ValueMatcher(null);

    private void matches(String expected, String actual) {
        assertThatCode(() -> matcher.assertMatches("root", BsonDocument.parse(expected), BsonDocument.parse(actual)))
                .doesNotThrowAnyException();
    }

    private void doesNotMatch(String expected, String actual) {
        assertThatThrownBy(
                        () -> matcher.assertMatches("root", BsonDocument.parse(expected), BsonDocument.parse(actual)))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void extraFieldsOnlyAtTheRoot() {
        matches("{insert: 'coll'}", "{insert: 'coll', lsid: {id: 1}}");
        doesNotMatch("{documents: [{_id: 1}]}", "{documents: [{_id: 1, x: 2}]}");
        doesNotMatch("{a: {b: 1}}", "{a: {b: 1, c: 2}}");
    }

    @Test
    void numbersMatchAcrossTypes_arraysByLength() {
        matches("{n: 1}", "{n: {$numberLong: '1'}}");
        matches("{n: 1.0}", "{n: 1}");
        doesNotMatch("{n: 2}", "{n: 1}");
        doesNotMatch("{a: [1, 2]}", "{a: [1, 2, 3]}");
    }

    @Test
    void operators() {
        matches("{maxTimeMS: {$$exists: false}}", "{insert: 'coll'}");
        doesNotMatch("{maxTimeMS: {$$exists: false}}", "{maxTimeMS: 5}");
        matches("{maxTimeMS: {$$type: ['int', 'long']}}", "{maxTimeMS: {$numberLong: '5'}}");
        doesNotMatch("{maxTimeMS: {$$type: ['int', 'long']}}", "{maxTimeMS: 5.5}");
        matches("{insertedId: {$$unsetOrMatches: 3}}", "{}");
        doesNotMatch("{insertedId: {$$unsetOrMatches: 3}}", "{insertedId: 4}");
        matches("{t: {$$lte: 10}}", "{t: 9}");
        doesNotMatch("{t: {$$lte: 10}}", "{t: 11}");
    }
}
