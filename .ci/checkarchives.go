//go:build ignore

// checkarchives checks the archives of a release build against what they
// must hold:
//
//	go run .ci/checkarchives.go DIST COMMIT-DATE FILE...
//
// Every archive that DIST/checksums.txt names must exist with that checksum
// and hold exactly the FILEs and the binary (queuectl, queuectl.exe on
// Windows), each entry dated COMMIT-DATE (RFC 3339), so that a build of one
// commit is the same in any clone.
package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type entry struct {
	name  string
	mtime time.Time
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: go run .ci/checkarchives.go DIST COMMIT-DATE FILE...")
		os.Exit(2)
	}
	dist, files := os.Args[1], os.Args[3:]
	date, err := time.Parse(time.RFC3339, os.Args[2])
	if err != nil {
		fail("commit date %q: %v", os.Args[2], err)
	}
	sums, err := readChecksums(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		fail("%v", err)
	}
	if len(sums) == 0 {
		fail("%s/checksums.txt names no archive", dist)
	}
	bad := 0
	for _, s := range sums {
		if err := check(filepath.Join(dist, s.name), s.sum, date, files); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
			bad++
			continue
		}
		fmt.Printf("%s: %d files and the binary, dated %s\n", s.name, len(files), date.UTC().Format(time.RFC3339))
	}
	if bad > 0 {
		fail("%d of %d archives are wrong", bad, len(sums))
	}
}

type checksum struct{ sum, name string }

func readChecksums(path string) ([]checksum, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []checksum
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("%s: cannot read the line %q", path, sc.Text())
		}
		out = append(out, checksum{sum, name})
	}
	return out, sc.Err()
}

func check(path, sum string, date time.Time, files []string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		return fmt.Errorf("sha256 %s, checksums.txt says %s", hex.EncodeToString(got[:]), sum)
	}
	var entries []entry
	binary := "queuectl"
	switch {
	case strings.HasSuffix(path, ".tar.gz"):
		entries, err = tarEntries(data)
	case strings.HasSuffix(path, ".zip"):
		entries, err = zipEntries(data)
		binary = "queuectl.exe"
	default:
		err = errors.New("neither .tar.gz nor .zip")
	}
	if err != nil {
		return err
	}
	want := append(slices.Clone(files), binary)
	var got []string
	var problems []string
	for _, e := range entries {
		got = append(got, e.name)
		if !e.mtime.Equal(date) {
			problems = append(problems, fmt.Sprintf("%s is dated %s, not the commit's %s", e.name,
				e.mtime.UTC().Format(time.RFC3339), date.UTC().Format(time.RFC3339)))
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			problems = append(problems, "missing "+w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			problems = append(problems, "unexpected "+g)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func tarEntries(data []byte) ([]entry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, entry{h.Name, h.ModTime})
	}
}

func zipEntries(data []byte) ([]entry, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, f := range zr.File {
		out = append(out, entry{f.Name, f.Modified})
	}
	return out, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "checkarchives: "+format+"\n", args...)
	os.Exit(1)
}
