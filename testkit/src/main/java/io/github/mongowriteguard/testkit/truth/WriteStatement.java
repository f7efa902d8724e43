package io.github.mongowriteguard.testkit.truth;

import org.bson.BsonDocument;

/**
 * One write statement a command carried, with the statement id the server gives it ({@code stmtIds[i]}, else
 * {@code stmtId + i}, else its position {@code i}), as the server's retryable-write bookkeeping identifies it.
 *
 * @param stmtId the statement's id
 * @param body   the statement as sent: an inserted document, or an update's or delete's {@code {q, u, ...}}
 */
public record WriteStatement(int stmtId, BsonDocument body) {}
