package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// file is one entry of a layer's tar. A name ending in "/" is a directory.
type file struct {
	name string
	mode int64
	data []byte
}

// tarLayer is a gzip-compressed OCI layer holding files, every entry owned
// by root and stamped with mtime, in name order: the same files give the
// same layer digest on every build.
func tarLayer(files []file, mtime time.Time) (v1.Layer, error) {
	sorted := append([]file(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range sorted {
		h := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if f.name[len(f.name)-1] == '/' {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
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
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression))
}

// layerFiles reads a layer back: every regular file's bytes and mode by its
// cleaned path (no leading "/" or "./").
func layerFiles(l v1.Layer) (map[string]file, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean("/" + h.Name)[1:]
		if h.Typeflag != tar.TypeReg {
			out[name+"/"] = file{name: name + "/", mode: h.Mode}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[name] = file{name: name, mode: h.Mode, data: b}
	}
}
