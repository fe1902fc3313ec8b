package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// file is one entry of an archive.
type file struct {
	name string
	mode fs.FileMode
	data []byte
}

// tarGz writes files as a gzipped tar that depends on nothing but them and
// mtime: entries sorted by name, owned by uid and gid 0 with no user
// names, every entry dated mtime, and a gzip header with neither name nor
// time. Folders the names imply get entries of their own, as tar does.
func tarGz(files []file, mtime time.Time) ([]byte, error) {
	entries := slices.Clone(files)
	seen := map[string]bool{}
	for _, f := range files {
		for dir := parentOf(f.name); dir != ""; dir = parentOf(dir) {
			if !seen[dir] {
				seen[dir] = true
				entries = append(entries, file{name: dir + "/", mode: fs.ModeDir | 0o755})
			}
		}
	}
	slices.SortFunc(entries, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range entries {
		h := &tar.Header{
			Name:    f.name,
			Mode:    int64(f.mode.Perm()),
			ModTime: mtime.UTC(),
			Format:  tar.FormatPAX,
		}
		if f.mode.IsDir() {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
		// PAX would add access and change times from ModTime's precision;
		// whole seconds keep the header to the USTAR fields.
		h.ModTime = h.ModTime.Truncate(time.Second)
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func parentOf(name string) string {
	name = strings.TrimSuffix(name, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	return name[:i]
}
