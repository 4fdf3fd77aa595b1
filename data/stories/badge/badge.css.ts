import { createStyles } from 'plaited'
import { badgeTokens } from './badge.tokens.ts'

export const styles = createStyles({
  badge: {
    display: 'inline-block',
    padding: '0.125rem 0.5rem',
    borderRadius: '999px',
    fontSize: '0.75rem',
    fontWeight: '600',
    lineHeight: '1.25rem',
  },
  neutral: {
    backgroundColor: badgeTokens.neutral,
    color: badgeTokens.neutralText,
  },
  success: {
    backgroundColor: badgeTokens.success,
    color: badgeTokens.successText,
  },
  warning: {
    backgroundColor: badgeTokens.warning,
    color: badgeTokens.warningText,
  },
  danger: {
    backgroundColor: badgeTokens.danger,
    color: badgeTokens.dangerText,
  },
  info: {
    backgroundColor: badgeTokens.info,
    color: badgeTokens.infoText,
  },
  count: {
    marginLeft: '0.5rem',
    backgroundColor: badgeTokens.count,
    color: badgeTokens.countText,
  },
  list: {
    display: 'flex',
    gap: '0.5rem',
    listStyle: 'none',
    margin: '0',
    padding: '0',
  },
  heading: {
    display: 'flex',
    alignItems: 'center',
    gap: '0.5rem',
    margin: '0',
    color: badgeTokens.heading,
  },
  inboxButton: {
    display: 'inline-flex',
    alignItems: 'center',
    padding: '0.5rem 0.75rem',
    borderRadius: '0.375rem',
    border: 'none',
    backgroundColor: badgeTokens.neutral,
    color: badgeTokens.neutralText,
    cursor: 'pointer',
  },
  visuallyHidden: {
    position: 'absolute',
    width: '1px',
    height: '1px',
    overflow: 'hidden',
    clip: 'rect(0 0 0 0)',
    whiteSpace: 'nowrap',
  },
})
