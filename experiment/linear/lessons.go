package linear

import (
	"embed"

	"github.com/fedscope/fedscope/experiment"
)

//go:embed lessons/*.md
var lessonFiles embed.FS

// Lessons implements experiment.Teacher: the paradox lesson.
func (Family) Lessons() []experiment.LessonFile {
	var out []experiment.LessonFile
	for _, name := range []string{"paradox"} {
		b, err := lessonFiles.ReadFile("lessons/" + name + ".md")
		if err != nil {
			panic("linear: built-in lesson missing: " + err.Error())
		}
		out = append(out, experiment.LessonFile{Name: name, Source: b})
	}
	return out
}
