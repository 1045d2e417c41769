package models

import (
	"context"
	"fmt"
	"strings"

	"github.com/assent-hq/assent/internal/secretkey"
)

// Purposes the secret columns are sealed for: a value copied into another
// column does not open there.
const (
	sealWebhookSecret  = "webhook_endpoints.secret"
	sealCallbackSecret = "callback_secret"
	sealIdempotency    = "idempotency_keys.response_body"
)

// sealedColumn is a column whose values are sealed under the secret key.
// Each value is bound to its table, column and row (the AES-GCM
// associated data), so it opens only in the row it was sealed for: copied
// into another organisation's row, it is refused. Every value is sealed
// and opened through seal and open, which take the column from here.
type sealedColumn struct {
	table   string
	key     []string // the primary key's columns
	column  string
	purpose string
	binary  bool // a bytes column: compared and written as bytes
}

var (
	colWebhookSecret         = sealedColumn{"webhook_endpoints", []string{"id"}, "secret", sealWebhookSecret, false}
	colWebhookPreviousSecret = sealedColumn{"webhook_endpoints", []string{"id"}, "previous_secret", sealWebhookSecret, false}
	colIdempotentResponse    = sealedColumn{"idempotency_keys", []string{"organization_id", "principal_id", "idempotency_key"}, "response_body", sealIdempotency, true}
	colPushKey               = sealedColumn{"push_keys", []string{"id"}, "private_key", sealPushKey, false}
	colSlackSigningSecret    = sealedColumn{"slack_integrations", []string{"organization_id"}, "signing_secret", sealSlackSigningSecret, false}
	colSlackBotToken         = sealedColumn{"slack_integrations", []string{"organization_id"}, "bot_token", sealSlackBotToken, false}
	colModelScreenKey        = sealedColumn{"model_screens", []string{"organization_id"}, "api_key", sealModelScreenKey, false}
)

// sealedColumns are every sealed column; a new one joins here so that
// re-sealing (after a rotation, or of values from before sealing) covers it.
// Each kind of request's callback secrets are one.
func sealedColumns() []sealedColumn {
	out := []sealedColumn{colWebhookSecret, colWebhookPreviousSecret, colIdempotentResponse,
		colPushKey, colSlackSigningSecret, colSlackBotToken, colModelScreenKey}
	for _, k := range requestKinds {
		out = append(out, k.callback())
	}
	return append(out, keyColumns()...)
}

// keyColumns are the signing keys' private halves, one column per family.
func keyColumns() []sealedColumn {
	out := make([]sealedColumn, len(keyFamilies))
	for i, f := range keyFamilies {
		out[i] = f.column()
	}
	return out
}

// place is where the row with primary key row stores a value of c.
func (c sealedColumn) place(row []string) []byte {
	if len(row) != len(c.key) {
		// A call site's bug, caught by any test that seals there.
		panic(fmt.Sprintf("%s.%s: row key has %d values, the table's has %d", c.table, c.column, len(row), len(c.key)))
	}
	return secretkey.Place(append([]string{c.table, c.column}, row...)...)
}

// seal seals plain for c in the row whose primary key is row.
func (s *core) seal(c sealedColumn, plain string, row ...string) string {
	return s.secrets.SealAt(c.purpose, c.place(row), plain)
}

// open opens value, read from c in the row whose primary key is row. A
// value copied from another row or column is refused, naming the row.
func (s *core) open(c sealedColumn, value string, row ...string) (string, error) {
	plain, err := s.secrets.OpenAt(c.purpose, c.place(row), value)
	if err != nil {
		return "", fmt.Errorf("%s.%s of %s: %w", c.table, c.column, strings.Join(row, "/"), err)
	}
	return plain, nil
}

// ResealSecrets seals every sealed value again under the current key,
// bound to its row: those sealed under an older key of the ring, those
// sealed before values were bound to their rows (v1, bound here to the row
// they are in), and values written in clear before columns were sealed.
// It runs after migrations and for `assent admin rotate-secret-key`; each
// value is rewritten only if it still holds what was read, so it is safe
// beside a running service.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	n := 0
	for _, col := range sealedColumns() {
		done, err := s.reseal(ctx, col)
		n += done
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (s *core) reseal(ctx context.Context, col sealedColumn) (int, error) {
	db := s.db.WithContext(ctx)
	var rows []map[string]any
	if err := db.Table(col.table).Select(strings.Join(col.key, ", ") + ", " + col.column + " AS value").
		Where(col.column + " IS NOT NULL").Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("%s.%s: %w", col.table, col.column, err)
	}
	n := 0
	for _, row := range rows {
		value := asString(row["value"])
		if value == "" || s.secrets.Bound(value) {
			continue
		}
		key := make([]string, len(col.key))
		for i, k := range col.key {
			key[i] = asString(row[k])
		}
		plain := value // written before the column was sealed
		if secretkey.IsSealedAny(value) {
			var err error
			if plain, err = s.open(col, value, key...); err != nil {
				return n, err // sealed under a key the ring lacks, or moved
			}
		}
		var was, resealed any = value, s.seal(col, plain, key...)
		if col.binary {
			was, resealed = []byte(value), []byte(resealed.(string))
		}
		q := db.Table(col.table).Where(col.column+" = ?", was)
		for _, k := range col.key {
			q = q.Where(k+" = ?", row[k])
		}
		res := q.Update(col.column, resealed)
		if res.Error != nil {
			return n, fmt.Errorf("%s.%s: %w", col.table, col.column, res.Error)
		}
		n += int(res.RowsAffected)
	}
	return n, nil
}

func asString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
