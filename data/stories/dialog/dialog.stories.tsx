import { type FT, joinStyles } from 'plaited'
import { story } from 'plaited/testing'
import { styles } from './dialog.css.ts'

export const meta = {
  title: 'Dialog',
  description: 'Modal dialogs labelled by their heading, each with a close button',
}

const DialogButton: FT<{ tone?: 'primary' | 'danger' | 'secondary'; busy?: boolean; type?: string }> = ({
  tone = 'secondary',
  type = 'button',
  busy = false,
  children,
  ...rest
}) => (
  <button
    type={type}
    disabled={busy}
    aria-busy={busy ? 'true' : undefined}
    {...joinStyles(styles.button, tone === 'primary' && styles.primary, tone === 'danger' && styles.danger, tone === 'secondary' && styles.secondary)}
    {...rest}
  >
    {children}
  </button>
)

const Dialog: FT<{ id: string; title: string; description?: string }> = ({ id, title, description, children }) => (
  <div {...styles.backdrop}>
    <div
      role='dialog'
      aria-modal='true'
      aria-labelledby={`${id}-title`}
      aria-describedby={description ? `${id}-description` : undefined}
      id={id}
      {...styles.dialog}
    >
      <header {...styles.header}>
        <h2 id={`${id}-title`} {...styles.title}>
          {title}
        </h2>
        <button type='button' aria-label='Close dialog' p-trigger={{ click: 'close' }} {...styles.close}>
          <span aria-hidden='true'>×</span>
        </button>
      </header>
      {description && (
        <p id={`${id}-description`} {...styles.body}>
          {description}
        </p>
      )}
      {children}
    </div>
  </div>
)

export const deleteProjectConfirm = story({
  intent: 'Create a modal dialog asking to confirm deleting the project "Apollo", with Cancel and Delete buttons',
  template: () => (
    <Dialog id='delete-project' title='Delete project?' description='Deleting "Apollo" removes all of its files. This cannot be undone.'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
        <DialogButton tone='danger' p-trigger={{ click: 'confirmDelete' }}>
          Delete project
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'an open dialog', should: 'be modal', actual: dialog?.getAttribute('aria-modal'), expected: 'true' })
  },
})

export const renameFileDialog = story({
  intent: 'Create a "Rename file" dialog containing a labelled "File name" input and a Save button',
  template: () => (
    <Dialog id='rename-file' title='Rename file'>
      <form {...styles.field}>
        <label htmlFor='rename-file-name'>File name</label>
        <input id='rename-file-name' name='fileName' type='text' value='quarterly-report.pdf' required={true} {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton p-trigger={{ click: 'close' }}>Cancel</DialogButton>
          <DialogButton tone='primary' type='submit'>
            Save
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
})

export const savingDialog = story({
  intent: 'Create an "Edit billing address" dialog in a saving state where the Save button is busy and disabled',
  template: () => (
    <Dialog id='billing-dialog' title='Edit billing address' description='Your changes are being saved.'>
      <p role='status' {...styles.body}>
        Saving billing address
      </p>
      <footer {...styles.footer}>
        <DialogButton busy={true} tone='primary'>
          Saving
        </DialogButton>
      </footer>
    </Dialog>
  ),
})

export const keyboardShortcutsDialog = story({
  intent: 'Create an informational "Keyboard shortcuts" dialog listing three shortcuts with a close button',
  template: () => (
    <Dialog id='shortcuts' title='Keyboard shortcuts'>
      <ul>
        <li>Press / to focus search</li>
        <li>Press N to create a new note</li>
        <li>Press ? to open this list</li>
      </ul>
    </Dialog>
  ),
})

export const sessionTimeoutDialog = story({
  intent: 'A modal titled "Are you still there?" and described by "You will be signed out in two minutes.", offering a plain "Sign out" and a primary "Stay signed in"',
  template: () => (
    <Dialog id='session-timeout' title='Are you still there?' description='You will be signed out in two minutes.'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'signOut' }}>Sign out</DialogButton>
        <DialogButton tone='primary' p-trigger={{ click: 'extendSession' }}>
          Stay signed in
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('role', 'dialog')
    assert({ given: 'a timeout warning', should: 'be described', actual: dialog?.getAttribute('aria-describedby'), expected: 'session-timeout-description' })
  },
})

export const inviteTeammateDialog = story({
  intent: 'An "Invite a teammate" modal with a required "Email address" field and a "Send invite" submit action',
  template: () => (
    <Dialog id='invite' title='Invite a teammate'>
      <form {...styles.field}>
        <label htmlFor='invite-email'>Email address</label>
        <input id='invite-email' name='email' type='email' required={true} {...styles.input} />
        <footer {...styles.footer}>
          <DialogButton tone='primary' type='submit'>
            Send invite
          </DialogButton>
        </footer>
      </form>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const input = await findByAttribute('id', 'invite-email')
    assert({ given: 'the invite form', should: 'ask for an email', actual: input?.getAttribute('type'), expected: 'email' })
  },
})

export const discardDraftDialog = story({
  intent: 'Ask before throwing away an unsent message: a "Discard draft?" modal with "Keep editing" and a destructive "Discard"',
  template: () => (
    <Dialog id='discard-draft' title='Discard draft?'>
      <footer {...styles.footer}>
        <DialogButton p-trigger={{ click: 'close' }}>Keep editing</DialogButton>
        <DialogButton tone='danger' p-trigger={{ click: 'discard' }}>
          Discard
        </DialogButton>
      </footer>
    </Dialog>
  ),
  play: async ({ assert, findByAttribute }) => {
    const dialog = await findByAttribute('aria-labelledby', 'discard-draft-title')
    assert({ given: 'a discard prompt', should: 'be modal', actual: dialog?.getAttribute('aria-modal'), expected: 'true' })
  },
})
