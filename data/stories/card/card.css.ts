import { createStyles } from 'plaited'
import { cardTokens } from './card.tokens.ts'

export const styles = createStyles({
  card: {
    display: 'flex',
    flexDirection: 'column',
    gap: '0.75rem',
    maxWidth: '22rem',
    padding: '1.25rem',
    borderWidth: '1px',
    borderStyle: 'solid',
    borderColor: cardTokens.border,
    borderRadius: '0.75rem',
    backgroundColor: cardTokens.surface,
  },
  header: {
    display: 'flex',
    alignItems: 'center',
    gap: '0.75rem',
  },
  heading: {
    margin: '0',
    fontSize: '1.25rem',
    color: cardTokens.heading,
  },
  body: {
    margin: '0',
    color: cardTokens.body,
    lineHeight: '1.5',
  },
  meta: {
    margin: '0',
    fontSize: '0.875rem',
    color: cardTokens.muted,
  },
  image: {
    width: '100%',
    borderRadius: '0.5rem',
  },
  avatar: {
    width: '3rem',
    height: '3rem',
    borderRadius: '50%',
  },
  actions: {
    display: 'flex',
    gap: '0.5rem',
  },
  button: {
    padding: '0.5rem 1rem',
    border: 'none',
    borderRadius: '0.375rem',
    backgroundColor: cardTokens.action,
    color: cardTokens.actionText,
    cursor: 'pointer',
  },
  buttonDisabled: {
    backgroundColor: cardTokens.disabled,
    cursor: 'not-allowed',
  },
  link: {
    color: cardTokens.link,
    textDecoration: 'underline',
  },
  skeleton: {
    display: 'block',
    height: '1rem',
    borderRadius: '0.25rem',
    backgroundColor: cardTokens.skeleton,
  },
  skeletonShort: {
    width: '60%',
  },
})
