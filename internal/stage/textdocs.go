package stage

import "github.com/otelbench/otelbench/internal/schema"

// textDocs builds log_text documents from logs given in id order: the tokens of each group's
// distinct trigrams (gramSet). emit receives every document with a trigram.
type TextDocs struct {
	grams gramSet
	g     int64
	open  bool
	Emit  func(g int64, text string) error
}

// add adds the body of log id, emitting the previous group's document when id starts a new
// group.
func (d *TextDocs) Add(id int64, body string) error {
	if g := id >> schema.LogTextShift; !d.open || g != d.g {
		if err := d.Finish(); err != nil {
			return err
		}
		d.g, d.open = g, true
	}
	d.grams.add(body)
	return nil
}

// finish emits the open group's document.
func (d *TextDocs) Finish() error {
	var err error
	if d.open && len(d.grams.doc) > 0 {
		err = d.Emit(d.g, string(d.grams.doc))
	}
	d.grams.reset()
	d.open = false
	return err
}

// textDoc is one log_text document (rowid g) of a slice, built by the stager (packTexts).
type textDoc struct {
	G    int64
	Text string
}

// packTexts builds the log_text documents of the groups the staged logs (in id order) touch,
// so that the projector's committing thread only inserts them (textIndexer.index). It runs
// where the slice is staged: on the stager while catching up. A first group that began in an
// earlier slice is left out (textFrom counts its logs): its document needs the earlier bodies,
// which the committing thread reads back from the database.
func (st *Stage) packTexts() {
	st.Texts = st.Texts[:0]
	st.TextFrom = 0
	logs := st.Logs
	if len(logs) == 0 {
		return
	}
	if g := logs[0].ID >> schema.LogTextShift; g<<schema.LogTextShift < logs[0].ID {
		for st.TextFrom < len(logs) && logs[st.TextFrom].ID>>schema.LogTextShift == g {
			st.TextFrom++
		}
	}
	d := &st.text
	d.Emit = st.addText
	for i := st.TextFrom; i < len(logs); i++ {
		_ = d.Add(logs[i].ID, logs[i].Body) // addText never fails
	}
	_ = d.Finish()
}

func (st *Stage) addText(g int64, text string) error {
	st.Texts = append(st.Texts, textDoc{g, text})
	return nil
}
