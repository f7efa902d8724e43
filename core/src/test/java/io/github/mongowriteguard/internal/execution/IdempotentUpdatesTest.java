package io.github.mongowriteguard.internal.execution;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotentUpdatesTest {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{$set: {a: 1}}",
                "{$unset: {a: ''}}",
                "{$min: {a: 1}}",
                "{$max: {a: 1}}",
                "{$addToSet: {tags: 'x'}}",
                "{$pull: {tags: 'x'}}",
                "{$set: {a: 1}, $unset: {b: ''}}"
            })
    void operatorsThatGiveTheSameResultTwice_areIdempotent(String update) {
        assertThat(IdempotentUpdates.isProvablyIdempotent(BsonDocument.parse(update)))
                .isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{$inc: {a: 1}}",
                "{$mul: {a: 2}}",
                "{$push: {tags: 'x'}}",
                "{$pop: {tags: 1}}",
                "{$rename: {a: 'b'}}",
                "{$set: {a: 1}, $inc: {b: 1}}",
                "{a: 1}",
                "{}"
            })
    void operatorsThatChangeAgain_orReplacements_areNot(String update) {
        assertThat(IdempotentUpdates.isProvablyIdempotent(BsonDocument.parse(update)))
                .isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"[{$set: {a: 1}}]"})
    void pipelines_areNot(String pipeline) {
        assertThat(IdempotentUpdates.isProvablyIdempotent(BsonArray.parse(pipeline)))
                .isFalse();
    }
}
