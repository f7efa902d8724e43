package io.github.mongowriteguard.testkit.truth;

import org.bson.BsonDocument;

/**
 * One write statement a command carried, with the statement id the server gives it ({@code stmtIds[i]}, else
 * {@code stmtId + i}, else its position {@code i}), as the server's retryable-write bookkeeping identifies it.
 *
 * @param stmtId the statement's id
 * @param body   the statement's identity, not its contents (the truth keeps every command until it is reset):
 *               an inserted document's {@code _id}; an update's or delete's {@code q._id}; an update's operators
 *               with the names of the fields they change, values null
 */
public record WriteStatement(int stmtId, BsonDocument body) {}
