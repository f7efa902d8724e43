package io.github.mongowriteguard.internal.command;

import io.github.mongowriteguard.bulk.WriteKind;

/**
 * The driver's request types, each its own command (driver-core {@code BulkWriteBatch}); plus whether the statements
 * may touch many documents, which the guard never mixes in one command.
 */
enum StatementBucket {
    INSERTS(WriteCommand.CommandType.INSERT, false),
    UPDATES(WriteCommand.CommandType.UPDATE, false),
    MULTI_UPDATES(WriteCommand.CommandType.UPDATE, true),
    REPLACEMENTS(WriteCommand.CommandType.UPDATE, false),
    DELETES(WriteCommand.CommandType.DELETE, false),
    MULTI_DELETES(WriteCommand.CommandType.DELETE, true);

    final WriteCommand.CommandType kind;
    final boolean multi;

    StatementBucket(WriteCommand.CommandType kind, boolean multi) {
        this.kind = kind;
        this.multi = multi;
    }

    static StatementBucket of(WriteKind kind) {
        return switch (kind) {
            case INSERT_ONE -> INSERTS;
            case REPLACE_ONE -> REPLACEMENTS;
            case UPDATE_ONE -> UPDATES;
            case UPDATE_MANY -> MULTI_UPDATES;
            case DELETE_ONE -> DELETES;
            case DELETE_MANY -> MULTI_DELETES;
        };
    }
}
