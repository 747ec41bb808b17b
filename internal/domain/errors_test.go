package domain_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func quote(s string) string { return strconv.Quote(s) }

func TestErrorf(t *testing.T) {
	t.Parallel()

	err := domain.Errorf(domain.ErrConflict, "message %s: status is DLVD", "0193")
	require.EqualError(t, err, "message 0193: status is DLVD", "the sentinel's text is not appended")
	require.ErrorIs(t, err, domain.ErrConflict)
	require.NotErrorIs(t, err, domain.ErrInvalid)

	wrapped := fmt.Errorf("resend: %w", err)
	require.ErrorIs(t, wrapped, domain.ErrConflict)
	require.Empty(t, domain.HintOf(wrapped))

	require.ErrorIs(t, domain.Invalidf("x"), domain.ErrInvalid)
	require.ErrorIs(t, domain.NotFoundf("x"), domain.ErrNotFound)
	require.ErrorIs(t, domain.Conflictf("x"), domain.ErrConflict)
}

func TestWithHint(t *testing.T) {
	t.Parallel()

	err := domain.WithHint(domain.ErrUnavailable, "the store is in use by another process", "stop the server or use --server")
	require.EqualError(t, err, "the store is in use by another process")
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.Equal(t, "stop the server or use --server", domain.HintOf(err))
	require.Equal(t, "stop the server or use --server", domain.HintOf(fmt.Errorf("open: %w", err)))
	require.Empty(t, domain.HintOf(errors.New("plain")))
	require.Empty(t, domain.HintOf(nil))
}
