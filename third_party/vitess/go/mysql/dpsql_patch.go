package mysql

// dpsql patch (see PATCHES.md at the root of this copy): commands and
// statements the upstream connection loop answers with an error before any
// handler sees them. Everything here is additive; conn.go calls it from
// lines marked "dpsql patch".

import (
	"context"
)

// ComStatistics is COM_STATISTICS (mysqladmin status).
const ComStatistics = 0x09

// ERPSManyParam is ER_PS_MANY_PARAM, "Prepared statement contains too many
// placeholders".
const ERPSManyParam = 1390

// maxPrepareParams: the protocol counts a statement's parameters in 16 bits.
const maxPrepareParams = 65535

// StatisticsHandler is implemented by a Handler that answers
// COM_STATISTICS. The reply is one packet holding the text, as MySQL sends
// it ("Uptime: 5  Threads: 1  Questions: 2 …"); an error is sent as an
// error packet. Without it the command is refused as unknown (1047).
type StatisticsHandler interface {
	ComStatistics(ctx context.Context, c *Conn) (string, error)
}

// PrepareParser is implemented by a Handler that gives this package the
// text to parse for a COM_STMT_PREPARE in place of the client's (for a
// statement the parser here does not know, such as DO). That text only
// counts the placeholders; the Handler's ComPrepare still gets the
// client's text.
type PrepareParser interface {
	PrepareParseText(c *Conn, query string) string
}

func prepareParseText(c *Conn, handler Handler, query string) string {
	if p, ok := handler.(PrepareParser); ok {
		return p.PrepareParseText(c, query)
	}
	return query
}

// handleComStatistics answers COM_STATISTICS through the handler.
func (c *Conn) handleComStatistics(ctx context.Context, handler Handler) error {
	sh, ok := handler.(StatisticsHandler)
	if !ok {
		return c.writeErrorPacket(ERUnknownComError, SSUnknownComError, "command handling not implemented yet: %v", ComStatistics)
	}
	text, err := sh.ComStatistics(ctx, c)
	if err != nil {
		return c.writeErrorPacketFromError(err)
	}
	data := c.startEphemeralPacket(len(text))
	copy(data, text)
	return c.writeEphemeralPacket()
}
