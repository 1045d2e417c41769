package comments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// TestCommentsAreOneTransactionEach: replies sent at once each land once,
// with one audit step and one comment.created apiece, numbered in order
// under the report's lock; only a comment's author retracts it, and only
// the last of its thread; a resolved thread takes no reply and is not
// resolved twice; nothing refused leaves a trace.
func TestCommentsAreOneTransactionEach(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		agent := func(n int) models.Actor {
			return models.Actor{ID: fmt.Sprintf("key_%d", n), Name: fmt.Sprintf("agent %d", n), Organization: org}
		}
		r, _, err := reports.Versions{Store: store}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3", Slug: "q3", SlugGiven: true,
			Classification: models.ClassInternal}, models.Publication{State: models.VersionPublished, By: agent(0),
			Files: []models.ManifestFile{{Path: "index.html", SHA256: "ab", Size: 10}}}, nil)
		require.NoError(t, err)
		svc := comments.New(comments.Deps{Store: store, Reports: reports.New(reports.Deps{Store: store}), BaseURL: "http://assent.test"})
		steps := func() int {
			got, err := store.GetReport(ctx, org.ID, r.ID)
			require.NoError(t, err)
			return got.AuditSeq
		}
		before := steps()

		opened, err := svc.Post(ctx, agent(1), r.Slug, &comments.PostInput{Body: "Is the total right?"})
		require.NoError(t, err)
		const replies = 8
		var wg sync.WaitGroup
		errs := make(chan error, replies)
		for i := range replies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := svc.Post(ctx, agent(2+i), r.Slug, &comments.PostInput{Body: fmt.Sprintf("reply %d", i), ThreadID: &opened.ID})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		thread, err := store.Thread(ctx, org.ID, opened.ID)
		require.NoError(t, err)
		require.Len(t, thread.Comments, 1+replies)
		assert.Equal(t, before+1+replies, steps(), "one audit step per comment")
		evs, err := store.ListEvents(ctx, org.ID, r.ID)
		require.NoError(t, err)
		created := 0
		for _, e := range evs {
			if e.Kind == events.CommentCreated {
				created++
				var data struct{ Comment struct{ ID string } }
				require.NoError(t, json.Unmarshal(e.Data, &data), "%s", e.Data)
				assert.NotEmpty(t, data.Comment.ID, "the comment in its event: %s", e.Data)
			}
		}
		assert.Equal(t, 1+replies, created, "one comment.created per comment")

		last := thread.Comments[len(thread.Comments)-1]
		first := thread.Comments[0]
		refused := steps()
		err = svc.Retract(ctx, agent(1), r.Slug, last.ID)
		assert.True(t, apperr.Is(err, apperr.Forbidden), "not its author: %v", err)
		err = svc.Retract(ctx, agent(1), r.Slug, first.ID)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "replies follow it: %v", err)
		assert.Equal(t, refused, steps(), "a refusal writes nothing")
		require.NoError(t, svc.Retract(ctx, models.Actor{ID: last.AuthorID, Name: last.AuthorName, Organization: org}, r.Slug, last.ID))
		thread, err = store.Thread(ctx, org.ID, opened.ID)
		require.NoError(t, err)
		assert.Len(t, thread.Comments, replies)

		resolved, err := svc.Resolve(ctx, agent(1), opened.ID, &comments.ResolveInput{Note: " done "})
		require.NoError(t, err)
		assert.Equal(t, models.ThreadResolved, resolved.Status)
		require.NotNil(t, resolved.ResolutionNote)
		assert.Equal(t, "done", *resolved.ResolutionNote)
		refused = steps()
		_, err = svc.Resolve(ctx, agent(1), opened.ID, &comments.ResolveInput{})
		assert.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
		_, err = svc.Post(ctx, agent(2), r.Slug, &comments.PostInput{Body: "late", ThreadID: &opened.ID})
		assert.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
		err = svc.Retract(ctx, agent(1), r.Slug, first.ID)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "a resolved thread keeps its comments: %v", err)
		assert.Equal(t, refused, steps())
		require.NoError(t, store.VerifyAuditChain(ctx, org.ID))
	})
}
