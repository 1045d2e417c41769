package notify_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
)

// lookUps counts the notices looked up, to see which sends skip it.
type lookUps struct {
	*models.Store
	n int
}

func (s *lookUps) NoticeSent(ctx context.Context, id string) (bool, error) {
	s.n++
	return s.Store.NoticeSent(ctx, id)
}

// TestAnEmailOfATransitionJustWrittenIsNotLookedUp: an email sent under
// NoneSent (a transition its sender just wrote) goes without a look-up of
// its notice and is still recorded, so any later send of it looks it up
// and sends nothing.
func TestAnEmailOfATransitionJustWrittenIsNotLookedUp(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := &lookUps{Store: models.NewStore(db, testenv.Keys())}
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		box := mail.NewMailbox(0)
		n := &notify.Notifier{Store: store, Mailer: box, BaseURL: "https://assent.example"}
		build := func() (notify.Draft, error) {
			return notify.Draft{Msg: mail.Message{To: []string{"bob@example.com"}, Subject: "Approval needed", Text: "."}}, nil
		}
		require.NoError(t, n.Once(notify.NoneSent(ctx), org.ID, "approval/apr_1/mem_1", build))
		assert.Zero(t, store.n, "not looked up")
		require.NoError(t, n.Once(ctx, org.ID, "approval/apr_1/mem_1", build))
		assert.Equal(t, 1, store.n, "looked up")
		assert.Len(t, box.Messages(), 1, "sent once: the first was recorded")
	})
}
